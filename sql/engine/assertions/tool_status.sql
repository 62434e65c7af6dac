-- tool_status: every call matching the tool (a glob as RE2; NULL regex = "*", every call, a
-- nameless one included) has an allowed status. Not exercised when no call matches.
-- A glob is matched against each distinct name (chk_names), never once per call.
-- A failure is located at the step of the first call with a disallowed status.
WITH unit_names AS (
    SELECT p.unit_id, n.name
    FROM p_tool_status p JOIN chk_names n ON regexp_full_match(n.name, p.regex)
),
matching AS (
    SELECT p.unit_id, c.episode_id, c.call_index, c.call_step_idx, c.tool_name, c.status,
           NOT list_contains(p.allow, c.status) AS bad
    FROM p_tool_status p
    JOIN chk_sel s ON s.case_id = p.case_id
    JOIN chk_calls c ON c.episode_id = s.episode_id
    WHERE p.regex IS NULL
    UNION ALL
    SELECT p.unit_id, c.episode_id, c.call_index, c.call_step_idx, c.tool_name, c.status,
           NOT list_contains(p.allow, c.status) AS bad
    FROM unit_names u
    JOIN p_tool_status p ON p.unit_id = u.unit_id
    JOIN chk_sel s ON s.case_id = p.case_id
    JOIN chk_calls c ON c.episode_id = s.episode_id AND c.tool_name = u.name
),
per_run AS (
    SELECT unit_id, episode_id, bool_or(bad) AS failed,
           min(call_index) FILTER (WHERE bad) AS call_index,
           arg_min(tool_name, call_index) FILTER (WHERE bad) AS tool_name,
           arg_min(status, call_index) FILTER (WHERE bad) AS status,
           arg_min(call_step_idx, call_index) FILTER (WHERE bad) AS step_idx
    FROM matching GROUP BY ALL
)
SELECT p.unit_id, s.episode_id, NOT coalesce(r.failed, false) AS passed,
       CASE WHEN r.episode_id IS NULL THEN 'no' ELSE 'yes' END AS exercised,
       CASE WHEN r.failed THEN
                'call_index ' || r.call_index || ' ('
                || coalesce(to_json(r.tool_name)::VARCHAR, 'without a name') || ') has status '
                || to_json(r.status)::VARCHAR || ', allowed: ' || array_to_string(p.allow, ', ')
            WHEN r.episode_id IS NULL THEN 'no call matches ' || p.label END AS reason,
       r.step_idx
FROM p_tool_status p
JOIN chk_sel s ON s.case_id = p.case_id
LEFT JOIN per_run r ON r.unit_id = p.unit_id AND r.episode_id = s.episode_id
