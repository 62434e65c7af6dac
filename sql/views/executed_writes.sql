-- Executed writes (docs/trace-format.md §4): calls whose effect is `write` and that ran (status ok).
-- Recorded effects only; a suite's `tools:` overrides apply at check time.
CREATE OR REPLACE VIEW executed_writes AS
SELECT * FROM tool_calls WHERE effect = 'write' AND status = 'ok';
