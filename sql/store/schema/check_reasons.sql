-- Why results of a saved check were left `exercised = no` (`tracelab view`): per case and
-- assertion, its most frequent reasons (`saved.REASONS_SAVED`), each with its number of runs and
-- the first of them by id (`saved.SAMPLE_RUNS`). Written with check_results by `tracelab check`.
CREATE TABLE IF NOT EXISTS check_reasons (
    run_id       VARCHAR NOT NULL,
    case_id      VARCHAR,
    assertion_id VARCHAR,
    reason       VARCHAR,
    runs         BIGINT,
    sample       VARCHAR[]
)
