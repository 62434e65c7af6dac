-- output_contains / output_not_contains (negate): the final `output` does / does not contain
-- the value, literally, case-sensitive unless ignore_case (DuckDB lower()). A NULL output
-- contains nothing; output_not_contains is not exercised without a final output.
WITH r AS (
    SELECT p.unit_id, s.episode_id, p.value, p.negate, e.output,
           coalesce(CASE WHEN p.ignore_case THEN contains(lower(e.output), lower(p.value))
                         ELSE contains(e.output, p.value) END, false) AS found
    FROM p_output_contains p
    JOIN chk_sel s ON s.case_id = p.case_id
    JOIN chk_episodes_in e ON e.episode_id = s.episode_id
)
SELECT unit_id, episode_id, found <> negate AS passed,
       CASE WHEN negate AND output IS NULL THEN 'no' ELSE 'yes' END AS exercised,
       CASE WHEN output IS NULL THEN 'no final output recorded'
            WHEN found AND negate THEN 'output contains ' || to_json(value)::VARCHAR
            WHEN NOT found AND NOT negate THEN 'output does not contain ' || to_json(value)::VARCHAR
       END AS reason
FROM r
