-- expect.termination: the run's termination is (one of) the listed words, compared exactly.
WITH r AS (
    SELECT p.unit_id, s.episode_id, p.allowed, e.termination,
           coalesce(list_contains(p.allowed, e.termination), false) AS passed
    FROM p_termination p
    JOIN chk_sel s ON s.case_id = p.case_id
    JOIN chk_episodes_in e ON e.episode_id = s.episode_id
)
SELECT unit_id, episode_id, passed, 'yes' AS exercised,
       CASE WHEN NOT passed THEN
           coalesce('terminated ' || to_json(termination)::VARCHAR, 'no termination recorded')
           || ', expected '
           || array_to_string(list_transform(allowed, lambda t: to_json(t)::VARCHAR), ' or ')
       END AS reason
FROM r
