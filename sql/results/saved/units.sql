-- The assertions of each case of saved check $run, in the suite's order (check_assertions.pos).
SELECT case_id, assertion_id, assertion_type
FROM check_assertions
WHERE run_id = $run
ORDER BY pos
