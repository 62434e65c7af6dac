-- selected.sql for a check $depth steps up the chain of `check --since` run $run (check_carried):
-- only the runs $run keeps of it, of its cases (macro check_kept, store/schema/check_results.sql).
SELECT case_id, episode_id
FROM check_selected s
WHERE s.run_id = $source AND ($cases IS NULL OR list_contains($cases, s.case_id))
  AND list_contains((SELECT cases FROM check_runs WHERE run_id = $run), s.case_id)
  AND check_kept($run, $depth, s.episode_id)  -- qualified: the macro's subquery has an episode_id too
  AND ($since IS NULL OR s.episode_id NOT IN (SELECT episode_id FROM episodes WHERE ingested_at > $since))
