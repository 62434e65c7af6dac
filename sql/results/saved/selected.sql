-- The runs each case of saved check $source selected as it wrote them (check_selected), of the cases
-- $cases (NULL: every case); with $since (`check --since`), only the runs not (re-)ingested after it.
SELECT case_id, episode_id
FROM check_selected
WHERE run_id = $source AND ($cases IS NULL OR list_contains($cases, case_id))
  AND ($since IS NULL OR episode_id NOT IN (SELECT episode_id FROM episodes WHERE ingested_at > $since))
