-- The results of saved check $run in the order the check wrote them (tracelab.saved.read_result),
-- for a report of a check saved without the rows `tracelab view` reads (saved.VIEW_TABLES): no
-- ORDER BY, the rows come as scanned, since a Parquet store's view over check_results/ (a check saved
-- by `check --engine spark`) has no rowid.
SELECT case_id, assertion_id, assertion_type, episode_id, passed, exercised, reason
FROM check_results
WHERE run_id = $run
