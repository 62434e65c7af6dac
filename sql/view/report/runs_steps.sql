-- Each run's steps as the report's script reads them (tracelab.view.runs): (run, its steps' JSON,
-- comma-separated), a step being [idx, kind, tool, status, effect, [content parts], failures or 0,
-- effect source, [offset ms, duration ms, tokens] or 0] with every text a number of view_strings. Content parts: {"w": n} a withheld field's notice,
-- n a text, {"c": m} m more characters clipped, {"e": 1} the step's error follows. Failures:
-- [[assertion, reason], ...]. Kind, tool, status, effect and its source are numbered once per
-- combination of the five, and notices once per withheld step, so that only the texts are looked up step by step.
WITH failed AS (
    SELECT f.run, f.idx,
           '[' || string_agg('[' || a.n || ',' || coalesce(r.n::VARCHAR, 'null') || ']', ',' ORDER BY f.slot)
               || ']' AS failed
    FROM view_failed_at f
    JOIN view_strings a ON a.value = f.assertion
    LEFT JOIN view_strings r ON r.value = f.reason
    GROUP BY f.run, f.idx
), kinds AS (
    SELECT k.kind, k.tool, k.status, k.effect, k.effect_source,
           coalesce(kind.n::VARCHAR, 'null') || ',' || coalesce(tool.n::VARCHAR, 'null') || ','
               || coalesce(status.n::VARCHAR, 'null') || ',' || coalesce(effect.n::VARCHAR, 'null') AS numbers,
           coalesce(source.n::VARCHAR, 'null') AS source
    FROM (SELECT DISTINCT kind, tool, status, effect, effect_source FROM view_texts) k
    LEFT JOIN view_strings kind ON kind.value = k.kind
    LEFT JOIN view_strings tool ON tool.value = k.tool
    LEFT JOIN view_strings status ON status.value = k.status
    LEFT JOIN view_strings effect ON effect.value = k.effect
    LEFT JOIN view_strings source ON source.value = k.effect_source
), notices AS (
    SELECT w.episode_id, w.idx,
           concat_ws(',', '{"w":' || w_data.n || '}', '{"w":' || w_text.n || '}', '{"w":' || w_error.n || '}')
               AS notices
    FROM view_withheld w
    LEFT JOIN view_strings w_data ON w_data.value = w.w_data
    LEFT JOIN view_strings w_text ON w_text.value = w.w_text
    LEFT JOIN view_strings w_error ON w_error.value = w.w_error
)
SELECT t.run,
       string_agg('[' || t.idx || ',' || k.numbers
                  || ',[' || concat_ws(',', nullif(w.notices, ''),
                        CASE WHEN t.sent IS NOT NULL THEN concat_ws(',', sent.n, '{"c":' || t.more_sent || '}') END,
                        CASE WHEN t.said IS NOT NULL THEN concat_ws(',', said.n, '{"c":' || t.more_said || '}') END,
                        CASE WHEN t.err IS NOT NULL THEN concat_ws(',', '{"e":1}', err.n, '{"c":' || t.more_err || '}') END)
                  || '],' || coalesce(f.failed, '0') || ',' || k.source || ','
                  || CASE WHEN t.offset_ms IS NULL AND t.duration_ms IS NULL AND t.tokens IS NULL THEN '0'
                          ELSE '[' || coalesce(t.offset_ms::VARCHAR, 'null') || ','
                               || coalesce(round(t.duration_ms)::BIGINT::VARCHAR, 'null') || ','
                               || coalesce(t.tokens::VARCHAR, 'null') || ']' END
                  || ']', ',' ORDER BY t.idx) AS steps
FROM view_texts t
JOIN kinds k ON k.kind IS NOT DISTINCT FROM t.kind AND k.tool IS NOT DISTINCT FROM t.tool
            AND k.status IS NOT DISTINCT FROM t.status AND k.effect IS NOT DISTINCT FROM t.effect
            AND k.effect_source IS NOT DISTINCT FROM t.effect_source
LEFT JOIN notices w USING (episode_id, idx)
LEFT JOIN failed f USING (run, idx)
LEFT JOIN view_strings sent ON sent.value = t.sent
LEFT JOIN view_strings said ON said.value = t.said
LEFT JOIN view_strings err ON err.value = t.err
GROUP BY t.run
