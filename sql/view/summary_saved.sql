-- sql/view/summary.sql, as `tracelab check` saved it: the runs it selected (check_runs.runs), and
-- of those the runs that failed no result of any case (none of check_failing_runs).
SELECT r.runs,
       r.runs - (SELECT count(DISTINCT episode_id) FROM check_failing_runs WHERE run_id = $run) AS runs_passed
FROM check_runs r
WHERE r.run_id = $run
