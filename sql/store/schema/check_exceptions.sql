-- The results of a saved check that are not plain passes: failed, not exercised (`no`, `unknown`),
-- or with a reason (NOT is_plain_pass, sql/store/views/rules.sql). A plain pass (passed, exercised `yes`,
-- no reason, no step) follows from the runs a case selected (check_selected) and is listed by the
-- view check_results only. Written by `tracelab check`.
CREATE TABLE IF NOT EXISTS check_exceptions (
    run_id         VARCHAR NOT NULL,
    case_id        VARCHAR,
    assertion_id   VARCHAR,
    assertion_type VARCHAR,
    episode_id     VARCHAR,
    passed         BOOLEAN,
    exercised      VARCHAR,
    reason         VARCHAR,
    step_idx       INTEGER      -- where the failure happened (docs/cli.md §6); NULL: the run as a whole
)
