-- Each case of a saved check that selected runs (`tracelab view`): its runs, those that passed
-- every result of the case, its failed results, and whether one was a permission result.
-- Written with check_results by `tracelab check`.
CREATE TABLE IF NOT EXISTS check_cases (
    run_id      VARCHAR NOT NULL,
    case_id     VARCHAR,
    runs        BIGINT,
    runs_passed BIGINT,
    failed      BIGINT,
    permission  BOOLEAN
)
