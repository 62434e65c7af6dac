-- The checks whose saved rows make saved check $run's (check_carried), the deepest first: the
-- order its results were checked in (a `check --since` run's kept rows come before its own). A
-- check that keeps none is its own chain.
SELECT source_run, depth FROM check_carried WHERE run_id = $run
UNION ALL
SELECT $run, 0 WHERE NOT EXISTS (SELECT 1 FROM check_carried WHERE run_id = $run)
ORDER BY depth DESC
