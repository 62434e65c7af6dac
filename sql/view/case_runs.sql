-- Each run of each case of saved check $run (tracelab.view), in a temp table that the cases,
-- failing runs and summary of the report read, so check_results is grouped by run once:
-- whether the run passed every result of the case, how many it failed, and whether one of
-- them was a permission result (docs/suites.md §5).
CREATE OR REPLACE TEMP TABLE view_case_runs AS
SELECT case_id, episode_id, bool_and(passed) AS ok, count(*) FILTER (WHERE NOT passed) AS failed,
       bool_or(NOT passed AND assertion_type IN ('must_not_leak', 'must_not_write', 'undeclared_writes'))
           AS permission
FROM check_results
WHERE run_id = $run
GROUP BY ALL
