-- Why results of saved check $run were not exercised (tracelab.view): per case and assertion,
-- the $top most frequent reasons, each with its number of runs and the first $sample of them.
WITH counted AS (
    SELECT case_id, assertion_id, reason, count(*) AS runs,
           list(episode_id ORDER BY episode_id)[1:$sample] AS sample
    FROM check_results
    WHERE run_id = $run AND exercised = 'no'
    GROUP BY case_id, assertion_id, reason
)
SELECT * FROM counted
QUALIFY row_number() OVER (PARTITION BY case_id, assertion_id ORDER BY runs DESC, reason) <= $top
ORDER BY case_id, assertion_id, runs DESC, reason
