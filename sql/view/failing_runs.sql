-- The failing runs of each case of the saved check in view_case_runs that the report shows
-- (tracelab.view): at most $max_runs per case, runs that crossed a permission boundary first,
-- then by id; `total` is how many failing runs the case has.
SELECT case_id, episode_id, count(*) OVER (PARTITION BY case_id) AS total
FROM view_case_runs
WHERE failed > 0
QUALIFY row_number() OVER (PARTITION BY case_id ORDER BY permission DESC, episode_id) <= $max_runs
ORDER BY case_id, permission DESC, episode_id
