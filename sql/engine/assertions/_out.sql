-- Where every family query puts its rows: one per (unit, run). step_idx: the step that decides
-- a failure (docs/cli.md §6, docs/suites.md §5); NULL on a pass, on a failure about the run
-- as a whole, and for a family that gives none (rows are inserted BY NAME).
CREATE OR REPLACE TEMP TABLE chk_out (
    unit_id    BIGINT NOT NULL,
    episode_id VARCHAR NOT NULL,
    passed     BOOLEAN NOT NULL,
    exercised  VARCHAR NOT NULL,
    reason     VARCHAR,
    step_idx   INTEGER
);
