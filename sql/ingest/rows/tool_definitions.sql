-- The tool_definitions rows of a batch.
SELECT k.eid AS episode_id, t.position, t.name, t.description, t.effect, t.parameters, t.annotations
FROM stage_tools t JOIN stage_keep k USING (line)
