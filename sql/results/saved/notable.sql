-- The results of saved check $run that are not plain passes (check_exceptions), of the cases $cases
-- (NULL: every case), in the order the check wrote them: by assertion, then run (`check --since`
-- keeps that order for the rows it carries over).
SELECT case_id, assertion_id, assertion_type, episode_id, passed, exercised, reason, step_idx
FROM check_exceptions
WHERE run_id = $run AND ($cases IS NULL OR list_contains($cases, case_id))
