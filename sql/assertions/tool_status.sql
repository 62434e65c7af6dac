-- tool_status: every call matching the tool (a glob as RE2; NULL regex = "*", every call, a
-- nameless one included) has an allowed status. Not exercised when no call matches.
WITH matching AS (
    SELECT p.unit_id, c.episode_id, c.call_index, c.tool_name, c.status,
           NOT list_contains(p.allow, c.status) AS bad
    FROM p_tool_status p
    JOIN chk_sel s ON s.case_id = p.case_id
    JOIN chk_calls c ON c.episode_id = s.episode_id
    WHERE p.regex IS NULL OR regexp_full_match(c.tool_name, p.regex)
),
per_run AS (
    SELECT unit_id, episode_id, bool_or(bad) AS failed,
           min(call_index) FILTER (WHERE bad) AS call_index,
           arg_min(tool_name, call_index) FILTER (WHERE bad) AS tool_name,
           arg_min(status, call_index) FILTER (WHERE bad) AS status
    FROM matching GROUP BY ALL
)
SELECT p.unit_id, s.episode_id, NOT coalesce(r.failed, false) AS passed,
       CASE WHEN r.episode_id IS NULL THEN 'no' ELSE 'yes' END AS exercised,
       CASE WHEN r.failed THEN
                'call_index ' || r.call_index || ' ('
                || coalesce(to_json(r.tool_name)::VARCHAR, 'without a name') || ') has status '
                || to_json(r.status)::VARCHAR || ', allowed: ' || array_to_string(p.allow, ', ')
            WHEN r.episode_id IS NULL THEN 'no call matches ' || p.label END AS reason
FROM p_tool_status p
JOIN chk_sel s ON s.case_id = p.case_id
LEFT JOIN per_run r ON r.unit_id = p.unit_id AND r.episode_id = s.episode_id
