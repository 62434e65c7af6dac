-- Columns added to the schema after a store was created: a store written by an earlier
-- tracelab gains them when it is next opened read-write (readers of an older store that is
-- opened read-only take them as NULL: tracelab.saved).
ALTER TABLE check_results ADD COLUMN IF NOT EXISTS step_idx INTEGER;
ALTER TABLE check_runs ADD COLUMN IF NOT EXISTS failed_cases VARCHAR[];
