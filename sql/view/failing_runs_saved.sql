-- sql/view/failing_runs.sql, as `tracelab check` saved it (check_failing_runs): per case, its
-- first $max_runs failing runs in the report's order (those that crossed a permission boundary
-- first, then by id), kept as they are found rather than all of them sorted.
SELECT case_id, episode_id, total
FROM (
    SELECT case_id, unnest(shown).e AS episode_id, generate_subscripts(shown, 1) AS place, total
    FROM (
        SELECT case_id, count(*) AS total,
               list_sort(min_by({'p': NOT permission, 'e': episode_id}, {'p': NOT permission, 'e': episode_id},
                                $max_runs)) AS shown
        FROM check_failing_runs
        WHERE run_id = $run
        GROUP BY case_id
    )
)
ORDER BY case_id, place
