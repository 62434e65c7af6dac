-- How many calls have an unknown effect (what `info` prints next to the executed writes).
SELECT count(*) FROM calls WHERE effect IS NULL
