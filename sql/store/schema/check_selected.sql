-- The runs each case of a saved check selected: with the case's assertions (check_assertions) they
-- give every result of the check, a plain pass wherever check_exceptions has no row (the view
-- check_results, store/schema/check_results.sql). Written by `tracelab check`.
CREATE TABLE IF NOT EXISTS check_selected (
    run_id     VARCHAR NOT NULL,
    case_id    VARCHAR NOT NULL,
    episode_id VARCHAR NOT NULL
)
