-- output_matches / output_not_matches (negate): the RE2 pattern is found anywhere in the final
-- `output`. A NULL output matches nothing; output_not_matches is not exercised without one.
WITH r AS (
    SELECT p.unit_id, s.episode_id, p.pattern, p.negate, e.output,
           coalesce(regexp_matches(e.output, p.pattern), false) AS found
    FROM p_output_matches p
    JOIN chk_sel s ON s.case_id = p.case_id
    JOIN episodes e ON e.episode_id = s.episode_id
)
SELECT unit_id, episode_id, found <> negate AS passed,
       CASE WHEN negate AND output IS NULL THEN 'no' ELSE 'yes' END AS exercised,
       CASE WHEN output IS NULL THEN 'no final output recorded'
            WHEN found AND negate THEN 'output matches ' || to_json(pattern)::VARCHAR
            WHEN NOT found AND NOT negate THEN 'output does not match ' || to_json(pattern)::VARCHAR
       END AS reason
FROM r
