-- The store's tool effects (docs/trace-format.md §6), edited with `tracelab effects`. `regex` is the
-- RE2 form of a glob pattern (NULL for an exact name); `seq` orders patterns set at one instant.
CREATE TABLE IF NOT EXISTS tool_effects (
    pattern  VARCHAR NOT NULL PRIMARY KEY,
    effect   VARCHAR NOT NULL CHECK (effect IN ('read', 'write')),
    note     VARCHAR,
    added_at TIMESTAMPTZ NOT NULL,
    regex    VARCHAR,
    seq      BIGINT NOT NULL
);
