-- The "runs" member of the report's JSON (tracelab.view.runs): for each run in its place, its id,
-- then {"head": [[label, value], ...], "whole": [[assertion, reason], ...], "steps": [...],
-- "tail": [[label, [parts]], ...]}, every text a number of view_strings (content parts as in
-- sql/view/runs_steps.sql). view_steps_json holds each run's steps.
WITH own AS (
    SELECT o.run, o.slot, s.n
    FROM view_own o
    JOIN view_strings s USING (value)
), heads AS (
    SELECT run,
           '[' || string_agg('[' || label || ',' || coalesce(value::VARCHAR, 'null') || ']', ',' ORDER BY pair) || ']'
               AS head
    FROM (SELECT run, slot // 2 AS pair, max(n) FILTER (WHERE slot % 2 = 0) AS label,
                 max(n) FILTER (WHERE slot % 2 = 1) AS value
          FROM own
          WHERE slot < 14
          GROUP BY run, slot // 2)
    GROUP BY run
), tails AS (
    SELECT o.run,
           '[' || concat_ws(',',
               '[' || max(o.n) FILTER (WHERE o.slot = 14) || ',['
                   || CASE WHEN any_value(t.w_output) IS NOT NULL THEN '{"w":' || max(o.n) FILTER (WHERE o.slot = 15) || '}'
                           ELSE concat_ws(',', max(o.n) FILTER (WHERE o.slot = 15), '{"c":' || any_value(t.more_output) || '}') END
                   || ']]',
               '[' || max(o.n) FILTER (WHERE o.slot = 16) || ',['
                   || CASE WHEN any_value(t.w_error) IS NOT NULL THEN '{"w":' || max(o.n) FILTER (WHERE o.slot = 17) || '}'
                           ELSE concat_ws(',', max(o.n) FILTER (WHERE o.slot = 17), '{"c":' || any_value(t.more_error) || '}') END
                   || ']]') || ']' AS tail
    FROM own o
    JOIN view_own_texts t USING (run)
    WHERE o.slot BETWEEN 14 AND 17
    GROUP BY o.run
), wholes AS (
    SELECT r.run,
           '[' || string_agg('[' || a.n || ',' || coalesce(reason.n::VARCHAR, 'null') || ']', ',' ORDER BY w.k) || ']'
               AS whole
    FROM view_whole w
    JOIN view_runs r USING (episode_id)
    JOIN view_strings a ON a.value = w.assertion
    LEFT JOIN view_strings reason ON reason.value = w.reason
    GROUP BY r.run
)
SELECT string_agg(to_json(r.episode_id)::VARCHAR || ':{"head":' || h.head || ',"whole":' || coalesce(w.whole, '[]')
                  || ',"steps":[' || coalesce(s.steps, '') || '],"tail":' || coalesce(t.tail, '[]') || '}',
                  ',' ORDER BY r.run)
FROM view_runs r
JOIN heads h USING (run)
LEFT JOIN wholes w USING (run)
LEFT JOIN tails t USING (run)
LEFT JOIN view_steps_json s USING (run)
