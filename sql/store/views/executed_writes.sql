-- Executed writes (docs/trace-format.md §4): calls whose resolved effect (view `calls`: recorded, else
-- the store's registry) is `write` and that ran (status ok). A suite's `tools:` overrides
-- apply at check time.
CREATE OR REPLACE VIEW executed_writes AS
SELECT * FROM calls WHERE effect = 'write' AND status = 'ok';
