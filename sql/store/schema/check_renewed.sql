-- The runs a `check --since` run evaluated afresh: every run ingested (or ingested again) after the
-- check it continued started, selected or not. Results of them saved by an earlier check up its
-- chain (check_carried) are not its results. Written by `tracelab check --since`.
CREATE TABLE IF NOT EXISTS check_renewed (
    run_id     VARCHAR NOT NULL,
    episode_id VARCHAR NOT NULL
)
