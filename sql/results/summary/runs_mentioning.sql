-- Runs whose transcript holds a string (any case), and where it appears (`tracelab demo`).
SELECT DISTINCT episode_id, origin
FROM transcript
WHERE contains(lower(text), lower($needle))
ORDER BY episode_id, origin
