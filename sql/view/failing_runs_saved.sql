-- sql/view/failing_runs.sql, as `tracelab check` saved it: per case, its first $max_runs failing runs
-- in the report's order (those that crossed a permission boundary first, then by id), of those
-- check_failing_runs holds (saved.FAILING_RUNS_SAVED; tracelab.view reads check_results for more),
-- and how many failing runs it has (check_cases).
SELECT case_id, episode_id, c.runs - c.runs_passed AS total
FROM (
    SELECT case_id, unnest(shown).e AS episode_id, generate_subscripts(shown, 1) AS place
    FROM (
        SELECT case_id,
               list_sort(min_by({'p': NOT permission, 'e': episode_id}, {'p': NOT permission, 'e': episode_id},
                                $max_runs)) AS shown
        FROM check_failing_runs
        WHERE run_id = $run
        GROUP BY case_id
    )
)
JOIN check_cases c USING (case_id)
WHERE c.run_id = $run
ORDER BY case_id, place
