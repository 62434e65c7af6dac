-- The runs of the saved check in view_case_runs (tracelab.view): how many, and how many passed
-- every result of every case selecting them. Result counts come from the assertions' rows.
WITH per_run AS (
    SELECT episode_id, bool_and(ok) AS ok
    FROM view_case_runs
    GROUP BY episode_id
)
SELECT count(*) AS runs, count(*) FILTER (WHERE ok) AS runs_passed
FROM per_run
