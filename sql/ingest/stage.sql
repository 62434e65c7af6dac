-- Split the batch into typed episodes, steps and tool definitions, each value read once.
-- stage_raw(line, file_no, src_line, source_uri, source_format, doc, steps, n_steps, tools, hash)
-- comes from Python (ingest._Batch): `line` keys a record in the batch, `src_line` is its line in
-- its file; `doc`, `steps` and `tools` are (ingest.prepare) strict
-- JSON re-serialised, the episode's `steps` and `tools` apart from the rest (`doc`), so that
-- each part is parsed once; n_steps is NULL when `steps` is not an array. `reason` is the first
-- rule of docs/trace-format.md §5 the row breaks (NULL: it breaks none); decide.sql picks an episode's first.
CREATE OR REPLACE TEMP TABLE stage AS
WITH parsed AS (
    SELECT line, file_no, src_line, source_uri, source_format, hash, n_steps, tools, from_json(doc, '{
        "episode_id": "JSON", "agent": "JSON", "agent_version": "JSON", "model": "JSON",
        "case_id": "JSON", "principal": "JSON", "input": "JSON", "output": "JSON",
        "termination": "JSON", "error": "JSON", "reward": "JSON", "started_at": "JSON",
        "ended_at": "JSON", "tags": "JSON", "meta": "JSON"
    }') AS e
    FROM stage_raw
), typed AS (
    SELECT line, file_no, src_line, source_uri, source_format, hash, n_steps, tools, e,
           tl_str(e.episode_id) AS eid,
           tl_timestamp(tl_str(e.started_at)) AS started_at,
           tl_timestamp(tl_str(e.ended_at)) AS ended_at,
           CASE WHEN tl_type(e.tags) = 'an array' THEN from_json(e.tags, '["JSON"]') END AS tags
    FROM parsed
)
SELECT line, file_no, src_line, source_uri, source_format, hash, eid,
       tl_str(e.agent) AS agent, tl_str(e.agent_version) AS agent_version, tl_str(e.model) AS model,
       tl_str(e.case_id) AS case_id, e.principal, tl_str(e.input) AS input,
       tl_str(e.output) AS output, tl_str(e.termination) AS termination, tl_str(e.error) AS error,
       try_cast(e.reward::VARCHAR AS DOUBLE) AS reward, started_at, ended_at,
       list_transform(tags, lambda t: tl_str(t)) AS tags,
       coalesce(tl_type(tools) = 'an array', false) AS tools_declared,
       CASE WHEN tl_type(tools) = 'an array' THEN tools END AS tools,
       n_steps, e.meta,
       coalesce(
           CASE WHEN tl_type(e.episode_id) IS DISTINCT FROM 'a string' OR eid = ''
               THEN 'episode_id must be a non-empty string' END,
           CASE WHEN n_steps IS NULL THEN 'steps must be an array' END,
           tl_bad('agent', e.agent, 'a string', 'a string or null'),
           tl_bad('agent_version', e.agent_version, 'a string', 'a string or null'),
           tl_bad('model', e.model, 'a string', 'a string or null'),
           tl_bad('case_id', e.case_id, 'a string', 'a string or null'),
           tl_bad('input', e.input, 'a string', 'a string or null'),
           tl_bad('output', e.output, 'a string', 'a string or null'),
           tl_bad('termination', e.termination, 'a string', 'a string or null'),
           tl_bad('error', e.error, 'a string', 'a string or null'),
           tl_bad('reward', e.reward, 'a number', 'a number'),
           CASE WHEN e.started_at IS NOT NULL AND (tl_type(e.started_at) <> 'a string' OR started_at IS NULL)
               THEN 'started_at must be an ISO-8601 timestamp string' END,
           CASE WHEN e.ended_at IS NOT NULL AND (tl_type(e.ended_at) <> 'a string' OR ended_at IS NULL)
               THEN 'ended_at must be an ISO-8601 timestamp string' END,
           CASE WHEN e.tags IS NOT NULL AND (tl_type(e.tags) <> 'an array' OR NOT coalesce(
                   list_bool_and(list_transform(tags, lambda t: coalesce(tl_type(t) = 'a string', false))), true))
               THEN 'tags must be an array of strings' END,
           tl_bad('principal', e.principal, 'an object', 'an object'),
           tl_bad('meta', e.meta, 'an object', 'an object'),
           CASE WHEN tl_type(tools) <> 'an array' THEN 'tools must be an array or null, not ' || tl_type(tools) END
       ) AS reason
FROM typed;

CREATE OR REPLACE TEMP TABLE stage_steps AS
WITH unnested AS (
    SELECT line, steps, unnest(s) AS s, generate_subscripts(s, 1) - 1 AS idx
    FROM (SELECT line, steps, from_json(steps, '[{
              "kind": "JSON", "name": "JSON", "call_id": "JSON", "text": "JSON", "error": "JSON",
              "args": "JSON", "result": "JSON", "status": "JSON", "is_error": "JSON", "effect": "JSON",
              "ts": "JSON", "duration_ms": "JSON", "meta": "JSON", "data": "JSON", "steps_used": "JSON",
              "tokens_used": "JSON", "_tl_args_text": "JSON", "_tl_args_bad": "JSON", "_tl_call_step": "JSON"
          }]') AS s
          FROM stage_raw WHERE n_steps IS NOT NULL)
), typed AS (
    SELECT line, idx, s,
           tl_str(s.kind) AS kind, tl_str(s.name) AS name, tl_str(s.call_id) AS call_id,
           tl_str(s.text) AS text, tl_str(s.error) AS error, tl_str(s.status) AS status,
           tl_str(s.effect) AS effect, tl_timestamp(tl_str(s.ts)) AS ts,
           -- A JSON null reads as NULL, like an absent key, and a step that is not an object as
           -- all NULLs. Only a step without a kind can be something other than an object, and
           -- only a budget can need to tell null from absent (its data holds the keys it has):
           -- only those steps are looked at again.
           CASE WHEN s.kind IS NULL THEN json_type(steps, '$[' || idx || ']') END AS step_type,
           CASE WHEN kind = 'budget' AND (s.steps_used IS NULL OR s.tokens_used IS NULL)
               THEN json_keys(steps, '$[' || idx || ']') END AS budget_keys
    FROM unnested
)
SELECT line, idx, kind, name, call_id, text, error,
       CASE kind
           WHEN 'tool_call' THEN s.args
           WHEN 'confirmation' THEN s.args
           WHEN 'tool_result' THEN s.result
           WHEN 'retrieval' THEN s.data
           WHEN 'event' THEN s.data
           WHEN 'budget' THEN CASE
               WHEN budget_keys IS NULL THEN json_object('steps_used', s.steps_used, 'tokens_used', s.tokens_used)
               WHEN list_contains(budget_keys, 'steps_used') AND list_contains(budget_keys, 'tokens_used')
                   THEN json_object('steps_used', s.steps_used, 'tokens_used', s.tokens_used)
               WHEN list_contains(budget_keys, 'steps_used') THEN json_object('steps_used', s.steps_used)
               WHEN list_contains(budget_keys, 'tokens_used') THEN json_object('tokens_used', s.tokens_used)
           END
       END AS data,
       CASE WHEN kind = 'tool_result' THEN CASE
           WHEN coalesce(status, '') <> '' THEN status
           WHEN s.is_error = 'true' THEN 'error'
           ELSE 'ok'
       END END AS status,
       ts, try_cast(s.duration_ms::VARCHAR AS DOUBLE) AS duration_ms, s.meta, effect,
       -- tool_calls: JSON-string args as recorded; args_bad when they do not parse (data keeps the string)
       tl_str(s._tl_args_text) AS args_text, s._tl_args_bad IS NOT NULL AS args_bad,
       -- tool_result: the step of its own call, when the adapter knows it (formats/base.CALL_STEP)
       CASE WHEN kind = 'tool_result' THEN try_cast(s._tl_call_step::VARCHAR AS BIGINT) END AS call_step,
       'steps[' || idx || ']: ' || coalesce(
           CASE WHEN step_type <> 'OBJECT' THEN 'a step must be an object, not ' || tl_type_of(step_type) END,
           CASE WHEN s.kind IS NULL THEN 'missing kind' END,
           tl_bad('kind', s.kind, 'a string', 'a string'),
           CASE WHEN kind NOT IN ('system', 'user', 'assistant', 'tool_call', 'tool_result',
                                  'confirmation', 'budget', 'retrieval', 'error', 'event')
               THEN 'unknown kind ' || to_json(kind) END,
           tl_bad('text', s.text, 'a string', 'a string or null'),
           tl_bad('name', s.name, 'a string', 'a string or null'),
           tl_bad('error', s.error, 'a string', 'a string or null'),
           tl_bad('call_id', s.call_id, 'a string', 'a string or null'),
           tl_bad('status', s.status, 'a string', 'a string or null'),
           CASE WHEN coalesce(status, '') NOT IN ('', 'ok', 'error', 'denied')
               THEN 'unknown status ' || to_json(status) || ' (ok, error or denied)' END,
           CASE WHEN s.effect IS NOT NULL AND (tl_type(s.effect) <> 'a string' OR effect NOT IN ('read', 'write'))
               THEN 'effect must be "read", "write" or null' END,
           CASE WHEN s.ts IS NOT NULL AND (tl_type(s.ts) <> 'a string' OR ts IS NULL)
               THEN 'ts must be an ISO-8601 timestamp string' END,
           tl_bad('duration_ms', s.duration_ms, 'a number', 'a number'),
           tl_bad('meta', s.meta, 'an object', 'an object')
       ) AS reason
FROM typed;

CREATE OR REPLACE TEMP TABLE stage_tools AS
WITH unnested AS (
    SELECT line, tools, unnest(t) AS t, generate_subscripts(t, 1) - 1 AS position
    FROM (SELECT line, tools, from_json(tools, '[{
              "name": "JSON", "description": "JSON", "effect": "JSON", "parameters": "JSON",
              "annotations": "JSON"
          }]') AS t
          FROM stage WHERE tools IS NOT NULL)
)
SELECT line, position, tl_str(t.name) AS name, tl_str(t.description) AS description,
       -- the recorded effect: its own, else its MCP annotations' (docs/trace-format.md §6): an annotations
       -- object says `read` only with readOnlyHint JSON true, `write` otherwise ({} included)
       coalesce(tl_str(t.effect), CASE WHEN tl_type(t.annotations) = 'an object' THEN
           CASE WHEN json_extract(t.annotations, '$.readOnlyHint')::VARCHAR = 'true' THEN 'read' ELSE 'write' END
       END) AS effect,
       t.parameters, t.annotations,
       'tools[' || position || ']: ' || coalesce(
           -- as for steps: only a definition without a name can be something other than an object
           CASE WHEN t.name IS NULL AND json_type(tools, '$[' || position || ']') <> 'OBJECT'
               THEN 'a tool definition must be an object' END,
           CASE WHEN tl_type(t.name) IS DISTINCT FROM 'a string' OR tl_str(t.name) = ''
               THEN 'name must be a non-empty string' END,
           tl_bad('description', t.description, 'a string', 'a string or null'),
           CASE WHEN t.effect IS NOT NULL AND (tl_type(t.effect) <> 'a string' OR tl_str(t.effect) NOT IN ('read', 'write'))
               THEN 'effect must be "read", "write" or null' END
       ) AS reason
FROM unnested;
