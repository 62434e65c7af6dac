-- Every staged episode that breaks a rule of trace-format §5, with the first reason found.
-- Episode-level rules first, then the first bad tool definition, then the first bad step.
CREATE OR REPLACE TEMP TABLE stage_bad AS
WITH step_bad AS (
    SELECT line, arg_min(reason, idx) AS reason
    FROM (
        SELECT line, idx, 'steps[' || idx || ']: ' || CASE
            WHEN step_type <> 'OBJECT' THEN 'a step must be an object, not ' || tl_jtype(kind)
            WHEN kind IS NULL OR json_type(kind) = 'NULL' THEN 'missing kind'
            WHEN json_type(kind) <> 'VARCHAR' THEN tl_bad('kind', kind, 'a string')
            WHEN tl_str(kind) NOT IN ('system', 'user', 'assistant', 'tool_call', 'tool_result',
                                      'confirmation', 'budget', 'retrieval', 'error', 'event')
                THEN 'unknown kind ' || to_json(tl_str(kind))
            WHEN NOT tl_is_str(text) THEN tl_bad('text', text, 'a string or null')
            WHEN NOT tl_is_str(name) THEN tl_bad('name', name, 'a string or null')
            WHEN NOT tl_is_str(error) THEN tl_bad('error', error, 'a string or null')
            WHEN NOT tl_is_str(call_id) THEN tl_bad('call_id', call_id, 'a string or null')
            WHEN NOT tl_is_str(status) THEN tl_bad('status', status, 'a string or null')
            WHEN coalesce(tl_str(status), '') NOT IN ('', 'ok', 'error', 'denied')
                THEN 'unknown status ' || to_json(tl_str(status)) || ' (ok, error or denied)'
            WHEN NOT tl_is_effect(effect) THEN 'effect must be "read", "write" or null'
            WHEN NOT tl_is_time(ts) THEN 'ts must be an ISO-8601 timestamp string'
            WHEN NOT tl_is_num(duration_ms) THEN tl_bad('duration_ms', duration_ms, 'a number')
            WHEN NOT tl_is_obj(meta) THEN tl_bad('meta', meta, 'an object')
        END AS reason
        FROM stage_steps
    )
    WHERE reason IS NOT NULL
    GROUP BY line
), tool_bad AS (
    SELECT line, arg_min(reason, position) AS reason
    FROM (
        SELECT line, position, 'tools[' || position || ']: ' || CASE
            WHEN tool_type <> 'OBJECT' THEN 'a tool definition must be an object'
            WHEN name IS NULL OR json_type(name) <> 'VARCHAR' OR tl_str(name) = ''
                THEN 'name must be a non-empty string'
            WHEN NOT tl_is_str(description) THEN tl_bad('description', description, 'a string or null')
            WHEN NOT tl_is_effect(effect) THEN 'effect must be "read", "write" or null'
        END AS reason
        FROM stage_tools
    )
    WHERE reason IS NOT NULL
    GROUP BY line
)
SELECT line, reason
FROM (
    SELECT s.line, coalesce(CASE
        WHEN s.episode_id IS NULL OR json_type(s.episode_id) <> 'VARCHAR' OR tl_str(s.episode_id) = ''
            THEN 'episode_id must be a non-empty string'
        WHEN s.steps IS NULL OR json_type(s.steps) <> 'ARRAY' THEN 'steps must be an array'
        WHEN NOT tl_is_str(s.agent) THEN tl_bad('agent', s.agent, 'a string or null')
        WHEN NOT tl_is_str(s.agent_version) THEN tl_bad('agent_version', s.agent_version, 'a string or null')
        WHEN NOT tl_is_str(s.model) THEN tl_bad('model', s.model, 'a string or null')
        WHEN NOT tl_is_str(s.case_id) THEN tl_bad('case_id', s.case_id, 'a string or null')
        WHEN NOT tl_is_str(s.input) THEN tl_bad('input', s.input, 'a string or null')
        WHEN NOT tl_is_str(s.output) THEN tl_bad('output', s.output, 'a string or null')
        WHEN NOT tl_is_str(s.termination) THEN tl_bad('termination', s.termination, 'a string or null')
        WHEN NOT tl_is_str(s.error) THEN tl_bad('error', s.error, 'a string or null')
        WHEN NOT tl_is_num(s.reward) THEN tl_bad('reward', s.reward, 'a number')
        WHEN NOT tl_is_time(s.started_at) THEN 'started_at must be an ISO-8601 timestamp string'
        WHEN NOT tl_is_time(s.ended_at) THEN 'ended_at must be an ISO-8601 timestamp string'
        WHEN NOT (s.tags IS NULL OR json_type(s.tags) = 'NULL' OR (json_type(s.tags) = 'ARRAY'
                  AND coalesce(list_bool_and(list_transform(json_extract(s.tags, '$[*]'),
                                                            lambda x: json_type(x) = 'VARCHAR')), true)))
            THEN 'tags must be an array of strings'
        WHEN NOT tl_is_obj(s.principal) THEN tl_bad('principal', s.principal, 'an object')
        WHEN NOT tl_is_obj(s.meta) THEN tl_bad('meta', s.meta, 'an object')
        WHEN NOT (s.tools IS NULL OR json_type(s.tools) IN ('ARRAY', 'NULL'))
            THEN tl_bad('tools', s.tools, 'an array or null')
    END, t.reason, st.reason) AS reason
    FROM stage s
    LEFT JOIN tool_bad t USING (line)
    LEFT JOIN step_bad st USING (line)
)
WHERE reason IS NOT NULL;
