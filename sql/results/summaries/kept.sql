-- The partial summaries saved check $run saved (check_summaries), when a `check --since` of the
-- cases $cases with $strict can continue from them: that check checked the same cases, and no run
-- it selected was ingested again after $since (its results of such a run are not the new
-- check's, so they cannot be taken out of its sums). No row otherwise.
SELECT kind, frame
FROM check_summaries
WHERE run_id = $run AND strict = $strict
  AND (SELECT list_sort(list_distinct(cases)) FROM check_runs WHERE run_id = $run) = list_sort(list_distinct($cases))
  AND NOT EXISTS (
      SELECT 1 FROM check_selected_runs s
      WHERE s.run_id = $run
        AND s.episode_id IN (SELECT episode_id FROM episodes WHERE ingested_at > $since))
