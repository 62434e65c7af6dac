-- Per case and assertion of saved check $run (tracelab.view), as `tracelab check` saved them
-- (check_assertions): results, passed, failed (for the summary), exercised yes / no / unknown;
-- `pos` keeps the order the check wrote them in (the suite's).
SELECT case_id, assertion_id, assertion_type, runs, passed, runs - passed AS failed, yes, no, unknown, pos
FROM check_assertions
WHERE run_id = $run
ORDER BY pos
