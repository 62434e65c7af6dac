-- The episode fields the coverage notebook groups and labels runs by (tracelab.cover.GROUP_COLUMNS).
SELECT episode_id, agent, agent_version, model, case_id, termination, source_format
FROM episodes
