-- The saved check $run itself (tracelab.view): suite, when, how long, its cases in suite order.
SELECT run_id, suite, suite_sha256, started_at, elapsed_ms, cases
FROM check_runs
WHERE run_id = $run
