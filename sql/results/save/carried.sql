-- `check --since`: the new run continues the saved check it names, which started at the instant
-- given. It keeps that check's results (and those that one kept) by reference, for its cases and
-- for the runs not (re-)ingested since (check_carried, check_renewed; views check_selected_runs and
-- check_notable_results): nothing is copied, whatever the size of the earlier check.
INSERT INTO check_renewed (run_id, episode_id)
SELECT $run_id, episode_id FROM episodes WHERE ingested_at > $since;

INSERT INTO check_carried (run_id, source_run, depth)
SELECT $run_id, $run_id, 0
UNION ALL
SELECT $run_id, $previous, 1
UNION ALL
SELECT $run_id, source_run, depth + 1 FROM check_carried WHERE run_id = $previous AND depth > 0;
