-- The summary of saved check $run (tracelab.view): runs, runs that passed every result of
-- every case selecting them, results, failed, and exercised yes / no / unknown.
WITH per_run AS (
    SELECT episode_id, bool_and(passed) AS ok
    FROM check_results WHERE run_id = $run
    GROUP BY episode_id
)
SELECT (SELECT count(*) FROM per_run), (SELECT count(*) FILTER (WHERE ok) FROM per_run),
       count(*), count(*) FILTER (WHERE NOT passed),
       count(*) FILTER (WHERE exercised = 'yes'), count(*) FILTER (WHERE exercised = 'no'),
       count(*) FILTER (WHERE exercised = 'unknown')
FROM check_results
WHERE run_id = $run
