-- sql/view/assertions.sql, as `tracelab check` saved it (check_assertions).
SELECT case_id, assertion_id, assertion_type, runs, passed, runs - passed AS failed, yes, no, unknown, pos
FROM check_assertions
WHERE run_id = $run
ORDER BY pos
