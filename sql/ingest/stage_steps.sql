-- A batch's steps, typed and checked (docs/trace-format.md §2, §5), each step's `reason` the first
-- rule it breaks (NULL: none). Read from stage_raw (see stage.sql); created in the current schema,
-- a schema of its own in the staging database (tracelab.ingest, `_Stager`): the reading thread
-- stages the next batch's steps while the writer works on this one.
CREATE TABLE stage_steps AS
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
