-- The first failing runs of each case of a saved check (`tracelab view`): by id, up to
-- saved.FAILING_RUNS_SAVED of those where the run failed a permission result of the case
-- (`permission`, docs/suites.md §5) and as many of the others; `view --max-runs` up to that many
-- reads them. Written with check_results by `tracelab check`; a check saved before this table
-- existed has no rows here, nor in check_cases (`tracelab view` then reads check_results).
CREATE TABLE IF NOT EXISTS check_failing_runs (
    run_id     VARCHAR NOT NULL,
    case_id    VARCHAR,
    episode_id VARCHAR,
    permission BOOLEAN
)
