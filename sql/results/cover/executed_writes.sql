-- Executed writes (view `executed_writes`: recorded effect, else the store's tool_effects; status ok)
-- with the run's agent, version and model.
SELECT w.episode_id, w.call_index, w.tool_name, w.args_text, e.agent, e.agent_version, e.model
FROM executed_writes w JOIN episodes e USING (episode_id)
