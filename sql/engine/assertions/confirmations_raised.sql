-- expect.confirmations_raised[i]: the run has a `confirmation` step naming the tool: the
-- write was put to a person.
WITH confirmed AS (
    SELECT DISTINCT episode_id, name
    FROM chk_steps_in
    WHERE kind = 'confirmation'
)
SELECT p.unit_id, s.episode_id,
       c.name IS NOT NULL AS passed,
       'yes' AS exercised,
       CASE WHEN c.name IS NULL THEN 'no confirmation step for ' || to_json(p.tool)::VARCHAR END
           AS reason
FROM p_confirmations_raised p
JOIN chk_sel s ON s.case_id = p.case_id
LEFT JOIN confirmed c ON c.episode_id = s.episode_id AND c.name = p.tool
