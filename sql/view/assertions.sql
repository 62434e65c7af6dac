-- Per case and assertion of saved check $run (tracelab.view): results, passed, failed (for the
-- summary), exercised yes / no / unknown; `pos` keeps the order the check wrote them in (the suite's).
SELECT case_id, assertion_id, any_value(assertion_type) AS assertion_type, count(*) AS runs,
       count(*) FILTER (WHERE passed) AS passed, count(*) FILTER (WHERE NOT passed) AS failed,
       count(*) FILTER (WHERE exercised = 'yes') AS yes,
       count(*) FILTER (WHERE exercised = 'no') AS no,
       count(*) FILTER (WHERE exercised = 'unknown') AS unknown,
       min(rowid) AS pos
FROM check_results
WHERE run_id = $run
GROUP BY case_id, assertion_id
ORDER BY pos
