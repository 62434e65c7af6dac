-- The runs each case of saved check $run selected (check_selected), of the cases $cases (NULL: every case).
SELECT case_id, episode_id
FROM check_selected
WHERE run_id = $run AND ($cases IS NULL OR list_contains($cases, case_id))
