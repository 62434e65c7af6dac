-- The partial summaries of each saved check of a DuckDB store (tracelab.results.summaries): per
-- kind (cases, runs, assertions, same_write, examples, failing_runs, reasons, families), one small
-- frame as Arrow IPC, bounded by the suite rather than by the runs, computed with `--strict` or
-- without (`strict`). A later `check --since` that keeps every run this check found merges these
-- with the new runs' instead of reading this check's rows back. Internal: check_results and the
-- tables `view` reads hold the same results as rows. Written by `tracelab check`.
CREATE TABLE IF NOT EXISTS check_summaries (
    run_id VARCHAR NOT NULL,
    kind   VARCHAR NOT NULL,
    strict BOOLEAN NOT NULL,
    frame  BLOB NOT NULL
)
