-- An earlier store's recorded effects, sourced after the fact (docs/trace-format.md §6): a call's effect
-- came from its definition when the episode's first definition of its name gives the same
-- effect and from its own step otherwise (when both agree the step is not told apart).
UPDATE tool_calls c SET effect_source = CASE
        WHEN c.effect IS NULL THEN NULL
        WHEN c.effect IS NOT DISTINCT FROM (
            SELECT arg_min(d.effect, d.position) FROM tool_definitions d
            WHERE d.episode_id = c.episode_id AND d.name = c.tool_name) THEN 'definition'
        ELSE 'step' END
WHERE c.effect IS NOT NULL AND c.effect_source IS NULL;
