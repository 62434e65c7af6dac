-- Executed writes (docs/trace-format.md §4, macro is_executed_write of rules.sql): calls whose resolved
-- effect (view `calls`: recorded, else the store's registry) is `write` and that ran (status
-- ok). A suite's `tools:` overrides apply at check time.
CREATE OR REPLACE VIEW executed_writes AS
SELECT * FROM calls WHERE is_executed_write(effect, status);
