-- No call's tool name contains a blocked substring (case-sensitive, literal; `exact`: Assay's
-- blocklist of exact names). Serves tool_blocklist and the sequence rule `blocklist`.
-- exercised (docs/suites.md §5): definitions only decide it for a pass: `no` when tools are declared
-- and no definition's name is blocked; `unknown` when tools are not declared; else `yes`.
-- A failure is located at the step of the first blocked call.
WITH blocked_calls AS (
    SELECT p.unit_id, c.episode_id,
           arg_min(c.tool_name, c.call_index) AS tool, arg_min(p.blocked, c.call_index) AS blocked,
           min(c.call_index) AS call_index, arg_min(c.call_step_idx, c.call_index) AS step_idx
    FROM p_blocklist p
    JOIN chk_sel s ON s.case_id = p.case_id
    JOIN chk_calls c ON c.episode_id = s.episode_id
    WHERE CASE WHEN p.exact THEN c.tool_name = p.blocked ELSE contains(c.tool_name, p.blocked) END
    GROUP BY ALL
),
blocked_defs AS (
    SELECT DISTINCT p.unit_id, d.episode_id
    FROM p_blocklist p
    JOIN chk_sel s ON s.case_id = p.case_id
    JOIN chk_defs d ON d.episode_id = s.episode_id
    WHERE CASE WHEN p.exact THEN d.name = p.blocked ELSE contains(d.name, p.blocked) END
),
r AS (
    SELECT DISTINCT p.unit_id, s.episode_id, s.tools_declared,
           b.tool, b.blocked, b.call_index, b.step_idx, d.unit_id IS NOT NULL AS offered
    FROM p_blocklist p
    JOIN chk_sel s ON s.case_id = p.case_id
    LEFT JOIN blocked_calls b ON b.unit_id = p.unit_id AND b.episode_id = s.episode_id
    LEFT JOIN blocked_defs d ON d.unit_id = p.unit_id AND d.episode_id = s.episode_id
)
SELECT unit_id, episode_id, tool IS NULL AS passed,
       CASE WHEN tool IS NOT NULL OR (tools_declared AND offered) THEN 'yes'
            WHEN tools_declared THEN 'no'
            ELSE 'unknown' END AS exercised,
       CASE WHEN tool IS NOT NULL THEN
                'called ' || to_json(tool)::VARCHAR || ' at call_index ' || call_index
                || ' (blocked: ' || to_json(blocked)::VARCHAR || ')'
            WHEN tools_declared AND NOT offered THEN 'no blocked tool was offered'
            WHEN NOT tools_declared THEN 'the tools offered were not recorded' END AS reason,
       step_idx
FROM r
