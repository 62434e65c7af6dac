-- Why results of saved check $run were not exercised (tracelab.view), as `tracelab check` saved it
-- (check_reasons): per case and assertion, the $top most frequent reasons, each with its number of
-- runs and the first $sample of them by id.
SELECT case_id, assertion_id, reason, runs, sample[1:$sample] AS sample
FROM check_reasons
WHERE run_id = $run
QUALIFY row_number() OVER (PARTITION BY case_id, assertion_id ORDER BY runs DESC, reason) <= $top
ORDER BY case_id, assertion_id, runs DESC, reason
