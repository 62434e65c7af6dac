-- sql/view/failing_runs.sql, as `tracelab check` saved it (check_failing_runs).
SELECT case_id, episode_id, count(*) OVER (PARTITION BY case_id) AS total
FROM check_failing_runs
WHERE run_id = $run
QUALIFY row_number() OVER (PARTITION BY case_id ORDER BY permission DESC, episode_id) <= $max_runs
ORDER BY case_id, permission DESC, episode_id
