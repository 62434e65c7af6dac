-- Write the kept episodes of the batch. Parameters: $source_format, $source_uri, $ingested_at.
-- stage_pairs(line, call_idx, result_idx) holds the call/result pairing (trace-format §2).
INSERT INTO episodes
SELECT k.eid, tl_str(s.agent), tl_str(s.agent_version), tl_str(s.model), tl_str(s.case_id),
       tl_nn(s.principal), tl_str(s.input), tl_str(s.output), tl_str(s.termination), tl_str(s.error),
       try_cast(tl_str(s.reward) AS DOUBLE),
       try_cast(tl_str(s.started_at) AS TIMESTAMPTZ), try_cast(tl_str(s.ended_at) AS TIMESTAMPTZ),
       CASE WHEN json_type(s.tags) = 'ARRAY' THEN json_extract_string(s.tags, '$[*]') END,
       coalesce(json_type(s.tools) = 'ARRAY', false),
       json_array_length(s.steps),
       tl_nn(s.meta), $source_format, $source_uri, s.line, s.hash, $ingested_at
FROM stage s JOIN stage_keep k USING (line);

INSERT INTO steps
SELECT k.eid, st.idx, tl_str(st.kind), tl_str(st.name), tl_str(st.call_id), tl_str(st.text),
       tl_str(st.error),
       CASE tl_str(st.kind)
           WHEN 'tool_call' THEN tl_nn(st.args)
           WHEN 'confirmation' THEN tl_nn(st.args)
           WHEN 'tool_result' THEN tl_nn(st.result)
           WHEN 'retrieval' THEN tl_nn(st.data)
           WHEN 'event' THEN tl_nn(st.data)
           WHEN 'budget' THEN CASE
               WHEN st.steps_used IS NOT NULL AND st.tokens_used IS NOT NULL
                   THEN json_object('steps_used', st.steps_used, 'tokens_used', st.tokens_used)
               WHEN st.steps_used IS NOT NULL THEN json_object('steps_used', st.steps_used)
               WHEN st.tokens_used IS NOT NULL THEN json_object('tokens_used', st.tokens_used)
           END
       END,
       CASE WHEN tl_str(st.kind) = 'tool_result' THEN CASE
           WHEN coalesce(tl_str(st.status), '') <> '' THEN tl_str(st.status)
           WHEN json_type(st.is_error) = 'BOOLEAN' AND st.is_error::VARCHAR = 'true' THEN 'error'
           ELSE 'ok'
       END END,
       try_cast(tl_str(st.ts) AS TIMESTAMPTZ), try_cast(tl_str(st.duration_ms) AS DOUBLE),
       tl_nn(st.meta)
FROM stage_steps st JOIN stage_keep k USING (line);

INSERT INTO tool_definitions
SELECT k.eid, t.position, tl_str(t.name), tl_str(t.description), tl_str(t.effect), tl_nn(t.parameters)
FROM stage_tools t JOIN stage_keep k USING (line);

INSERT INTO tool_calls
WITH first_def AS (
    SELECT line, tl_str(name) AS name, arg_min(tl_str(effect), position) AS effect
    FROM stage_tools JOIN stage_keep USING (line)
    GROUP BY ALL
)
SELECT k.eid,
       (row_number() OVER (PARTITION BY c.line ORDER BY c.idx) - 1)::INTEGER,
       c.idx, p.result_idx, tl_str(c.call_id), tl_str(c.name),
       CASE WHEN c.args_bad IS NULL THEN tl_nn(c.args) END,
       CASE
           WHEN tl_nn(c.args) IS NULL THEN NULL
           WHEN c.args_text IS NOT NULL THEN tl_str(c.args_text)
           WHEN json_type(c.args) = 'VARCHAR' THEN tl_str(c.args)
           ELSE c.args::VARCHAR
       END,
       coalesce(tl_str(r.text), CASE
           WHEN json_type(r.result) = 'VARCHAR' THEN tl_str(r.result)
           WHEN tl_nn(r.result) IS NOT NULL THEN r.result::VARCHAR
       END),
       CASE
           WHEN r.line IS NULL THEN 'missing'
           WHEN coalesce(tl_str(r.status), '') <> '' THEN tl_str(r.status)
           WHEN json_type(r.is_error) = 'BOOLEAN' AND r.is_error::VARCHAR = 'true' THEN 'error'
           ELSE 'ok'
       END,
       tl_str(r.error),
       coalesce(tl_str(c.effect), d.effect),
       coalesce(try_cast(tl_str(r.duration_ms) AS DOUBLE), try_cast(tl_str(c.duration_ms) AS DOUBLE))
FROM stage_steps c
JOIN stage_keep k USING (line)
LEFT JOIN stage_pairs p ON p.line = c.line AND p.call_idx = c.idx
LEFT JOIN stage_steps r ON r.line = p.line AND r.idx = p.result_idx
LEFT JOIN first_def d ON d.line = c.line AND d.name = tl_str(c.name)
WHERE tl_str(c.kind) = 'tool_call';
