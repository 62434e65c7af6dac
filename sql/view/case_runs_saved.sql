-- Each run of each case of saved check $run as `tracelab check` saved it (check_case_runs), as the
-- view_case_runs that sql/view/case_runs.sql otherwise computes from check_results.
CREATE OR REPLACE TEMP TABLE view_case_runs AS
SELECT case_id, episode_id, failed = 0 AS ok, failed, permission
FROM check_case_runs
WHERE run_id = $run
