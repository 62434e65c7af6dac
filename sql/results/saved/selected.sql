-- The runs each case of saved check $source selected as it wrote them (check_selected), of the cases
-- $cases (NULL: every case).
SELECT case_id, episode_id
FROM check_selected
WHERE run_id = $source AND ($cases IS NULL OR list_contains($cases, case_id))
