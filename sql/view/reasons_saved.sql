-- sql/view/reasons.sql, as `tracelab check` saved it (check_reasons): the $top most frequent
-- reasons per case and assertion, each with the first $sample of its runs.
SELECT case_id, assertion_id, reason, runs, sample[1:$sample] AS sample
FROM check_reasons
WHERE run_id = $run
QUALIFY row_number() OVER (PARTITION BY case_id, assertion_id ORDER BY runs DESC, reason) <= $top
ORDER BY case_id, assertion_id, runs DESC, reason
