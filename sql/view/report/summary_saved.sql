-- The runs of saved check $run (tracelab.view), as `tracelab check` saved them: the runs it selected,
-- and of those the runs that failed no result of any case (check_runs.runs, runs_failed). Result
-- counts come from the assertions' rows.
SELECT runs, runs - runs_failed AS runs_passed
FROM check_runs
WHERE run_id = $run
