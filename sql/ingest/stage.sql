-- Split the batch into typed episodes and tool definitions, each value read once (its steps:
-- stage_steps.sql, staged ahead by the reading thread).
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
