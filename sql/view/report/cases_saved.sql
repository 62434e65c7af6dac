-- Per case of saved check $run (tracelab.view), as `tracelab check` saved them (check_cases): runs,
-- runs that passed every result of the case, results failed, and whether a permission result failed.
SELECT case_id, runs, runs_passed, failed, permission
FROM check_cases
WHERE run_id = $run
