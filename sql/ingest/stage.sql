-- Split each staged episode document (strict JSON, re-serialised by Python) into fields.
-- stage_raw(line, doc, hash) is the batch (ingest/raw.sql), filled from Arrow.
CREATE OR REPLACE TEMP TABLE stage AS
SELECT line, hash,
       j[1] AS episode_id, j[2] AS agent, j[3] AS agent_version, j[4] AS model, j[5] AS case_id,
       j[6] AS principal, j[7] AS input, j[8] AS output, j[9] AS termination, j[10] AS error,
       j[11] AS reward, j[12] AS started_at, j[13] AS ended_at, j[14] AS tags, j[15] AS tools,
       j[16] AS steps, j[17] AS meta
FROM (
    SELECT line, hash,
           json_extract(doc, ['$.episode_id', '$.agent', '$.agent_version', '$.model', '$.case_id',
                              '$.principal', '$.input', '$.output', '$.termination', '$.error',
                              '$.reward', '$.started_at', '$.ended_at', '$.tags', '$.tools',
                              '$.steps', '$.meta']) AS j
    FROM stage_raw
);

CREATE OR REPLACE TEMP TABLE stage_steps AS
SELECT line, idx, step_type,
       s[1] AS kind, s[2] AS name, s[3] AS call_id, s[4] AS text, s[5] AS error, s[6] AS args,
       s[7] AS result, s[8] AS status, s[9] AS is_error, s[10] AS effect, s[11] AS ts,
       s[12] AS duration_ms, s[13] AS meta, s[14] AS data, s[15] AS steps_used,
       s[16] AS tokens_used, s[17] AS args_text, s[18] AS args_bad
FROM (
    SELECT line, idx, json_type(sj) AS step_type,
           json_extract(sj, ['$.kind', '$.name', '$.call_id', '$.text', '$.error', '$.args',
                             '$.result', '$.status', '$.is_error', '$.effect', '$.ts',
                             '$.duration_ms', '$.meta', '$.data', '$.steps_used',
                             '$.tokens_used', '$._tl_args_text', '$._tl_args_bad']) AS s
    FROM (
        SELECT line, unnest(l) AS sj, unnest(range(len(l))) AS idx
        FROM (SELECT line, json_extract(steps, '$[*]') AS l FROM stage WHERE json_type(steps) = 'ARRAY')
    )
);

CREATE OR REPLACE TEMP TABLE stage_tools AS
SELECT line, position, tool_type,
       t[1] AS name, t[2] AS description, t[3] AS effect, t[4] AS parameters
FROM (
    SELECT line, position, json_type(tj) AS tool_type,
           json_extract(tj, ['$.name', '$.description', '$.effect', '$.parameters']) AS t
    FROM (
        SELECT line, unnest(l) AS tj, unnest(range(len(l))) AS position
        FROM (SELECT line, json_extract(tools, '$[*]') AS l FROM stage WHERE json_type(tools) = 'ARRAY')
    )
);
