-- Every step of the shown runs (show_runs(episode_id)) in order, with its call's status and
-- recorded effect: a tool_call step is its call's call_step_idx, a tool_result step its
-- result_step_idx. `data` comes as JSON text (a tool_call's args, a result's payload).
SELECT s.episode_id, s.idx, s.kind, s.name, s.call_id, s.text, s.error, s.data::VARCHAR AS data,
       coalesce(s.status, c.status) AS status, c.effect, s.duration_ms
FROM steps s
LEFT JOIN tool_calls c
       ON c.episode_id = s.episode_id AND s.idx IN (c.call_step_idx, c.result_step_idx)
WHERE s.episode_id IN (SELECT episode_id FROM show_runs)
QUALIFY row_number() OVER (PARTITION BY s.episode_id, s.idx ORDER BY c.call_index) = 1
ORDER BY s.episode_id, s.idx
