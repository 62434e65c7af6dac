-- The failing runs of each case of saved check $run that the report shows (tracelab.view):
-- at most $max_runs per case, runs that crossed a permission boundary first, then by id;
-- `total` is how many failing runs the case has.
WITH failed AS (
    SELECT case_id, episode_id,
           bool_or(assertion_type IN ('must_not_leak', 'must_not_write', 'undeclared_writes')) AS permission
    FROM check_results
    WHERE run_id = $run AND NOT passed
    GROUP BY case_id, episode_id
)
SELECT case_id, episode_id, count(*) OVER (PARTITION BY case_id) AS total
FROM failed
QUALIFY row_number() OVER (PARTITION BY case_id ORDER BY permission DESC, episode_id) <= $max_runs
ORDER BY case_id, permission DESC, episode_id
