-- Every step of the shown runs (show_runs(episode_id)) in order, with its call's status and
-- recorded effect: a tool_call step is its call's call_step_idx, a tool_result step its
-- result_step_idx (a result without a name of its own shows its call's tool). `data` comes as
-- JSON text (a tool_call's args, a result's payload).
WITH calls AS (
    SELECT episode_id, call_step_idx, result_step_idx, tool_name, status, effect
    FROM tool_calls
    WHERE episode_id IN (SELECT episode_id FROM show_runs)
)
SELECT s.episode_id, s.idx, s.kind, coalesce(s.name, r.tool_name) AS name, s.call_id, s.text, s.error, s.data::VARCHAR AS data,
       coalesce(s.status, c.status, r.status) AS status, coalesce(c.effect, r.effect) AS effect,
       s.duration_ms
FROM steps s
LEFT JOIN calls c ON c.episode_id = s.episode_id AND c.call_step_idx = s.idx
LEFT JOIN calls r ON r.episode_id = s.episode_id AND r.result_step_idx = s.idx
WHERE s.episode_id IN (SELECT episode_id FROM show_runs)
ORDER BY s.episode_id, s.idx
