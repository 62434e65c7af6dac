-- `check --since`: the results saved check $previous found for the chosen $cases and for the runs
-- not (re-)ingested after it started ($since), saved again under run $run_id: the rows
-- tracelab.engine.evaluate.Carried kept (CheckResult.carried), copied inside the store rather than
-- through Python.
INSERT INTO check_selected (run_id, case_id, episode_id)
SELECT $run_id, case_id, episode_id
FROM check_selected
WHERE run_id = $previous AND list_contains($cases, case_id)
  AND episode_id NOT IN (SELECT episode_id FROM episodes WHERE ingested_at > $since);

INSERT INTO check_exceptions (run_id, case_id, assertion_id, assertion_type, episode_id, passed, exercised,
                              reason, step_idx)
SELECT $run_id, case_id, assertion_id, assertion_type, episode_id, passed, exercised, reason, step_idx
FROM check_exceptions
WHERE run_id = $previous AND list_contains($cases, case_id)
  AND episode_id NOT IN (SELECT episode_id FROM episodes WHERE ingested_at > $since);
