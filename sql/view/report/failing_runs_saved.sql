-- The failing runs of each case of saved check $run that the report shows (tracelab.view): its first
-- $max_runs in the report's order (those that crossed a permission boundary first, then by id), of
-- those check_failing_runs holds (saved.FAILING_RUNS_SAVED; for more, tracelab.view computes them from
-- check_results), and how many failing runs it has (check_cases).
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
