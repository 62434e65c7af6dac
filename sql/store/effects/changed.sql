-- When the store's tool effects last changed (`effects set`, `import`, `unset`): `check --since`
-- refuses to continue a check saved before it, whose verdicts were computed under other effects.
-- DELETE then INSERT: a store's tracelab_meta may have no primary key to upsert on.
DELETE FROM tracelab_meta WHERE key = 'effects_changed_at';
INSERT INTO tracelab_meta VALUES ('effects_changed_at', $now::VARCHAR)
