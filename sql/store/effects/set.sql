-- Declare or change effects: effects_new(pattern, effect, regex, pos) comes from Python. A pattern
-- already present keeps its place (`added_at`, `seq`); its note changes only when one is given.
INSERT INTO tool_effects (pattern, effect, note, added_at, regex, seq)
SELECT pattern, effect, $note, $now, regex,
       (SELECT coalesce(max(seq), 0) FROM tool_effects) + pos
FROM effects_new
ON CONFLICT (pattern) DO UPDATE SET effect = excluded.effect, note = coalesce(excluded.note, tool_effects.note)
