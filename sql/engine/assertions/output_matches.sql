-- output_matches / output_not_matches (negate): the RE2 pattern is found anywhere in the final
-- `output`. A NULL output matches nothing; output_not_matches is not exercised without one.
WITH runs AS (
    SELECT p.unit_id, s.episode_id, p.pattern, p.negate, e.output
    FROM p_output_matches p
    JOIN chk_sel s ON s.case_id = p.case_id
    JOIN chk_episodes_in e ON e.episode_id = s.episode_id
),
-- a pattern that is not a constant is compiled for every row it meets: each distinct (output,
-- pattern) is matched once, since the runs of a case repeat their outputs
matches AS (
    SELECT output, pattern, coalesce(regexp_matches(output, pattern), false) AS found
    FROM (SELECT DISTINCT output, pattern FROM runs WHERE output IS NOT NULL)
),
r AS (
    SELECT u.unit_id, u.episode_id, u.pattern, u.negate, u.output, coalesce(m.found, false) AS found
    FROM runs u
    LEFT JOIN matches m ON m.output = u.output AND m.pattern = u.pattern
)
SELECT unit_id, episode_id, found <> negate AS passed,
       CASE WHEN negate AND output IS NULL THEN 'no' ELSE 'yes' END AS exercised,
       CASE WHEN output IS NULL THEN 'no final output recorded'
            WHEN found AND negate THEN 'output matches ' || to_json(pattern)::VARCHAR
            WHEN NOT found AND NOT negate THEN 'output does not match ' || to_json(pattern)::VARCHAR
       END AS reason
FROM r
