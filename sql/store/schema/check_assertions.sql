-- Each assertion of each case of a saved check (`tracelab view`): its results, how many passed,
-- exercised yes / no / unknown; `pos` orders them as check_results holds them (the suite's order).
-- Written with check_results by `tracelab check`.
CREATE TABLE IF NOT EXISTS check_assertions (
    run_id         VARCHAR NOT NULL,
    case_id        VARCHAR,
    assertion_id   VARCHAR,
    assertion_type VARCHAR,
    pos            BIGINT,
    runs           BIGINT,
    passed         BIGINT,
    yes            BIGINT,
    no             BIGINT,
    unknown        BIGINT
)
