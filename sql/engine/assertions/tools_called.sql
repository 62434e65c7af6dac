-- expect.tools_called[i]: the tool was called at least once (any status), name compared exactly.
SELECT p.unit_id, s.episode_id,
       coalesce(t.n_calls, 0) > 0 AS passed,
       'yes' AS exercised,
       CASE WHEN coalesce(t.n_calls, 0) = 0 THEN to_json(p.tool)::VARCHAR || ' was never called' END
           AS reason
FROM p_tools_called p
JOIN chk_sel s ON s.case_id = p.case_id
LEFT JOIN chk_tools t ON t.episode_id = s.episode_id AND t.name = p.tool
