-- Where every family query puts its rows: one per (unit, run).
CREATE OR REPLACE TEMP TABLE chk_out (
    unit_id    BIGINT NOT NULL,
    episode_id VARCHAR NOT NULL,
    passed     BOOLEAN NOT NULL,
    exercised  VARCHAR NOT NULL,
    reason     VARCHAR
);
