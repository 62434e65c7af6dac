-- sql/view/cases.sql, as `tracelab check` saved it (check_cases).
SELECT case_id, runs, runs_passed, failed, permission
FROM check_cases
WHERE run_id = $run
