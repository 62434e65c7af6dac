-- sql/view/summary.sql, as `tracelab check` saved it: the runs it selected, and of those the runs
-- that failed no result of any case (check_runs.runs, runs_failed).
SELECT runs, runs - runs_failed AS runs_passed
FROM check_runs
WHERE run_id = $run
