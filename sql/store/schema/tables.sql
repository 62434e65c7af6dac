-- The tables of docs/trace-format.md §3. Column names are the contract; extra columns are ours.
CREATE TABLE IF NOT EXISTS tracelab_meta (key VARCHAR PRIMARY KEY, value VARCHAR);

CREATE TABLE IF NOT EXISTS episodes (
    episode_id     VARCHAR NOT NULL,
    agent          VARCHAR,
    agent_version  VARCHAR,
    model          VARCHAR,
    case_id        VARCHAR,
    principal      JSON,
    input          VARCHAR,
    output         VARCHAR,
    termination    VARCHAR,
    error          VARCHAR,
    reward         DOUBLE,
    started_at     TIMESTAMPTZ,
    ended_at       TIMESTAMPTZ,
    tags           VARCHAR[],
    tools_declared BOOLEAN NOT NULL,
    n_steps        INTEGER NOT NULL,
    meta           JSON,
    source_format  VARCHAR,
    source_uri     VARCHAR,
    source_line    BIGINT,
    content_hash   VARCHAR NOT NULL,
    ingested_at    TIMESTAMPTZ
);

CREATE TABLE IF NOT EXISTS steps (
    episode_id  VARCHAR NOT NULL,
    idx         INTEGER NOT NULL,
    kind        VARCHAR NOT NULL,
    name        VARCHAR,
    call_id     VARCHAR,
    text        VARCHAR,
    error       VARCHAR,
    data        JSON,
    status      VARCHAR,
    ts          TIMESTAMPTZ,
    duration_ms DOUBLE,
    meta        JSON
);

CREATE TABLE IF NOT EXISTS tool_calls (
    episode_id      VARCHAR NOT NULL,
    call_index      INTEGER NOT NULL,
    call_step_idx   INTEGER NOT NULL,
    result_step_idx INTEGER,
    call_id         VARCHAR,
    tool_name       VARCHAR,
    args            JSON,
    args_text       VARCHAR,
    result_text     VARCHAR,
    status          VARCHAR NOT NULL,
    error           VARCHAR,
    effect          VARCHAR,
    duration_ms     DOUBLE,
    effect_source   VARCHAR        -- where `effect` came from: 'step', 'definition' or NULL (§6)
);

CREATE TABLE IF NOT EXISTS tool_definitions (
    episode_id  VARCHAR NOT NULL,
    position    INTEGER NOT NULL,
    name        VARCHAR NOT NULL,
    description VARCHAR,
    effect      VARCHAR,
    parameters  JSON,
    annotations JSON
);

CREATE TABLE IF NOT EXISTS quarantine (
    source_uri  VARCHAR NOT NULL,
    line        BIGINT,
    reason      VARCHAR NOT NULL,
    raw         VARCHAR,
    ingested_at TIMESTAMPTZ
);

CREATE TABLE IF NOT EXISTS sources (
    source_uri   VARCHAR NOT NULL,
    content_hash VARCHAR NOT NULL,
    format       VARCHAR,
    episodes     BIGINT,
    quarantined  BIGINT,
    ingested_at  TIMESTAMPTZ,
    -- the file's size and modification time when it was read: a re-run skips a file whose
    -- path, size and time are unchanged without reading it (sql/ingest/recorded.sql)
    file_size     BIGINT,
    file_mtime_ns BIGINT,
    -- records of types its adapter does not know (a newer version's), by type: {"world_state": 3}
    -- (docs/formats.md, Coding-agent sessions: forward compatibility); NULL when none
    unread        JSON
);

CREATE TABLE IF NOT EXISTS check_runs (
    run_id       VARCHAR NOT NULL,
    suite        VARCHAR,
    suite_sha256 VARCHAR,
    started_at   TIMESTAMPTZ,
    elapsed_ms   BIGINT,
    cases        VARCHAR[],     -- the case ids this run checked (for `check --since`)
    since_run    VARCHAR,       -- the run it continued, for an incremental check
    failed_cases VARCHAR[],     -- the checked cases that failed (docs/suites.md §5), for `tracelab view`
    runs         BIGINT,        -- the runs the checked cases selected, for `tracelab view` (NULL: saved without check_cases & co)
    runs_failed  BIGINT,        -- of those, the runs that failed a result of a case selecting them, for `tracelab view`
    tools        STRUCT(pattern VARCHAR, effect VARCHAR, regex VARCHAR, is_glob BOOLEAN)[]
                                -- the suite's `tools:` effect overrides in suite order, each with its RE2
                                -- pattern as the check matched it (p_tools), for `show` and `view` to
                                -- resolve effects as the check did (NULL: saved without them)
);

-- check_results, one row per (case, assertion, run) of each saved check, is a view
-- (store/schema/check_results.sql) over check_selected, check_assertions and check_exceptions, and
-- for a `check --since` run check_carried and check_renewed.
