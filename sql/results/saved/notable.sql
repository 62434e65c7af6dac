-- The results that are not plain passes which saved check $source wrote (check_exceptions), of the
-- cases $cases (NULL: every case), in the order it wrote them (by assertion, then run); with $since
-- (`check --since`), only those of the runs not (re-)ingested after it.
SELECT case_id, assertion_id, assertion_type, episode_id, passed, exercised, reason, step_idx
FROM check_exceptions
WHERE run_id = $source AND ($cases IS NULL OR list_contains($cases, case_id))
  AND ($since IS NULL OR episode_id NOT IN (SELECT episode_id FROM episodes WHERE ingested_at > $since))
