-- expect.writes[i]: the tool has an executed write (effect `write` after overrides, status ok).
SELECT p.unit_id, s.episode_id,
       coalesce(t.exec_write, false) AS passed,
       'yes' AS exercised,
       CASE WHEN NOT coalesce(t.exec_write, false) THEN
           'no executed write of ' || to_json(p.tool)::VARCHAR
           || CASE WHEN t.call_write THEN ' (its write calls did not run)'
                   WHEN t.n_calls > 0 THEN ' (called, but not as a write)'
                   ELSE ' (never called)' END
       END AS reason
FROM p_writes p
JOIN chk_sel s ON s.case_id = p.case_id
LEFT JOIN chk_tools t ON t.episode_id = s.episode_id AND t.name = p.tool
