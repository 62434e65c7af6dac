-- Per case of saved check $run (tracelab.view): runs, runs that passed every result of the
-- case, results failed, and whether a permission result failed (docs/suites.md §5).
WITH per_run AS (
    SELECT case_id, episode_id, bool_and(passed) AS ok, count(*) FILTER (WHERE NOT passed) AS failed,
           bool_or(NOT passed AND assertion_type IN ('must_not_leak', 'must_not_write', 'undeclared_writes'))
               AS permission
    FROM check_results
    WHERE run_id = $run
    GROUP BY ALL
)
SELECT case_id, count(*) AS runs, count(*) FILTER (WHERE ok) AS runs_passed, sum(failed)::BIGINT AS failed,
       bool_or(permission) AS permission
FROM per_run
GROUP BY case_id
