-- Each (case, run) pair of a saved check where the run failed a result of the case (`tracelab
-- view`): how many, and whether one of them was a permission result (docs/suites.md §5). Written
-- with check_results by `tracelab check`; a check saved before this table existed has no rows
-- here, nor in check_cases (`tracelab view` then reads check_results).
CREATE TABLE IF NOT EXISTS check_failing_runs (
    run_id     VARCHAR NOT NULL,
    case_id    VARCHAR,
    episode_id VARCHAR,
    failed     BIGINT,
    permission BOOLEAN
)
