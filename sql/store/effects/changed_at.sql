-- When the tool effects last changed: the instant `effects set/import/unset` recorded, else (a store
-- written before they recorded it) the latest `added_at` of a declared pattern; NULL: never.
SELECT coalesce(
    (SELECT max(value::TIMESTAMPTZ) FROM tracelab_meta WHERE key = 'effects_changed_at'),
    (SELECT max(added_at) FROM tool_effects))
