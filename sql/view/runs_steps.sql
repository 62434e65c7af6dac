-- Each run's steps as the report's script reads them (tracelab.view.runs): (run, its steps' JSON,
-- comma-separated), a step being [idx, kind, tool, status, effect, [content parts], failures or 0]
-- with every text a number of view_strings. Content parts: {"w": n} a withheld field's notice,
-- n a text, {"c": m} m more characters clipped, {"e": 1} the step's error follows. Failures:
-- [[assertion, reason], ...].
WITH failed AS (
    SELECT f.run, f.idx,
           '[' || string_agg('[' || a.n || ',' || coalesce(r.n::VARCHAR, 'null') || ']', ',' ORDER BY f.slot)
               || ']' AS failed
    FROM view_failed_at f
    JOIN view_strings a ON a.value = f.assertion
    LEFT JOIN view_strings r ON r.value = f.reason
    GROUP BY f.run, f.idx
)
SELECT t.run,
       string_agg('[' || t.idx || ',' || coalesce(kind.n::VARCHAR, 'null') || ',' || coalesce(tool.n::VARCHAR, 'null')
                  || ',' || coalesce(status.n::VARCHAR, 'null') || ',' || coalesce(effect.n::VARCHAR, 'null')
                  || ',[' || concat_ws(',',
                        '{"w":' || w_data.n || '}', '{"w":' || w_text.n || '}', '{"w":' || w_error.n || '}',
                        CASE WHEN t.sent IS NOT NULL THEN concat_ws(',', sent.n, '{"c":' || t.more_sent || '}') END,
                        CASE WHEN t.said IS NOT NULL THEN concat_ws(',', said.n, '{"c":' || t.more_said || '}') END,
                        CASE WHEN t.err IS NOT NULL THEN concat_ws(',', '{"e":1}', err.n, '{"c":' || t.more_err || '}') END)
                  || '],' || coalesce(f.failed, '0') || ']', ',' ORDER BY t.idx) AS steps
FROM view_texts t
LEFT JOIN failed f USING (run, idx)
LEFT JOIN view_strings kind ON kind.value = t.kind
LEFT JOIN view_strings tool ON tool.value = t.tool
LEFT JOIN view_strings status ON status.value = t.status
LEFT JOIN view_strings effect ON effect.value = t.effect
LEFT JOIN view_strings w_data ON w_data.value = t.w_data
LEFT JOIN view_strings w_text ON w_text.value = t.w_text
LEFT JOIN view_strings w_error ON w_error.value = t.w_error
LEFT JOIN view_strings sent ON sent.value = t.sent
LEFT JOIN view_strings said ON said.value = t.said
LEFT JOIN view_strings err ON err.value = t.err
GROUP BY t.run
