-- The saved check's `tools:` effect overrides (check_runs.tools), for sql/view/show/steps.sql: one
-- row each, `pos` its place in the suite, `regex` the RE2 pattern its name or glob matches in full
-- (tracelab.suite.globs, as the check compiles them: p_tools), from $overrides (their JSON list).
-- Empty without a check.
CREATE OR REPLACE TEMP TABLE show_overrides AS
SELECT unnest(from_json($overrides, '[{"pos": "INTEGER", "regex": "VARCHAR", "is_glob": "BOOLEAN", "effect": "VARCHAR"}]'),
              recursive := true);

-- step_tokens(kind, meta, data): the tokens a source recorded for a step (NULL: none), under the keys
-- the formats write in its meta: usage.total_tokens, total_tokens, tokens, OpenInference's
-- llm.token_count.total, OpenTelemetry's gen_ai.usage input + output tokens; a budget step's
-- tokens_used (docs/trace-format.md §2: the run's tokens so far).
CREATE OR REPLACE TEMP MACRO step_tokens(kind, meta, data) AS
    coalesce(try_cast(json_extract_string(meta, '$.usage.total_tokens') AS BIGINT),
             try_cast(json_extract_string(meta, '$.total_tokens') AS BIGINT),
             try_cast(json_extract_string(meta, '$.tokens') AS BIGINT),
             try_cast(json_extract_string(meta, '$."llm.token_count.total"') AS BIGINT),
             try_cast(json_extract_string(meta, '$."gen_ai.usage.input_tokens"') AS BIGINT)
                 + try_cast(json_extract_string(meta, '$."gen_ai.usage.output_tokens"') AS BIGINT),
             CASE WHEN kind = 'budget' THEN try_cast(json_extract_string(data, '$.tokens_used') AS BIGINT) END);
