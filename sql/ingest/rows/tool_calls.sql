-- The tool_calls rows of a batch: each call with the result paired to it (stage_pairs) and its
-- effect: its own, else that of the episode's first definition of its name (docs/trace-format.md §3).
WITH first_def AS (
    SELECT line, name, arg_min_null(effect, position) AS effect
    FROM stage_tools JOIN stage_keep USING (line)
    GROUP BY ALL
)
SELECT k.eid AS episode_id,
       (row_number() OVER (PARTITION BY c.line ORDER BY c.idx) - 1)::INTEGER AS call_index,
       c.idx AS call_step_idx, p.result_idx AS result_step_idx, c.call_id, c.name AS tool_name,
       CASE WHEN NOT c.args_bad THEN c.data END AS args,
       coalesce(c.args_text, tl_text(c.data)) AS args_text,
       coalesce(r.text, tl_text(r.data)) AS result_text,
       coalesce(r.status, 'missing') AS status, r.error,
       coalesce(c.effect, d.effect) AS effect, coalesce(r.duration_ms, c.duration_ms) AS duration_ms,
       CASE WHEN c.effect IS NOT NULL THEN 'step' WHEN d.effect IS NOT NULL THEN 'definition' END AS effect_source
FROM stage_steps c
JOIN stage_keep k USING (line)
LEFT JOIN stage_pairs p ON p.line = c.line AND p.call_idx = c.idx
LEFT JOIN stage_steps r ON r.line = p.line AND r.idx = p.result_idx AND r.kind = 'tool_result'
LEFT JOIN first_def d ON d.line = c.line AND d.name = c.name
WHERE c.kind = 'tool_call'
