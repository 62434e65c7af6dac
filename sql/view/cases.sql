-- Per case of the saved check in view_case_runs (tracelab.view): runs, runs that passed every
-- result of the case, results failed, and whether a permission result failed.
SELECT case_id, count(*) AS runs, count(*) FILTER (WHERE ok) AS runs_passed, sum(failed)::BIGINT AS failed,
       bool_or(permission) AS permission
FROM view_case_runs
GROUP BY case_id
