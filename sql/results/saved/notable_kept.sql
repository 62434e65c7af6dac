-- notable.sql for a check $depth steps up the chain of `check --since` run $run (check_carried):
-- only the results $run keeps of it, of its cases (macro check_kept, store/schema/check_results.sql).
SELECT case_id, assertion_id, assertion_type, episode_id, passed, exercised, reason, step_idx
FROM check_exceptions x
WHERE x.run_id = $source AND ($cases IS NULL OR list_contains($cases, x.case_id))
  AND list_contains((SELECT cases FROM check_runs WHERE run_id = $run), x.case_id)
  AND check_kept($run, $depth, x.episode_id)  -- qualified: the macro's subquery has an episode_id too
  AND ($since IS NULL OR x.episode_id NOT IN (SELECT episode_id FROM episodes WHERE ingested_at > $since))
