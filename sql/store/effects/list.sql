-- The store's tool effects (docs/trace-format.md §6) in the order globs are tried.
SELECT pattern, effect, note, added_at FROM tool_effects ORDER BY added_at, seq
