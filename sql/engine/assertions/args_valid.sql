-- args_valid, the part SQL can do: the calls of the tool in each selected run (one row with a
-- NULL call_index for a run without any), with the recorded `parameters` of the run's
-- definition of the tool (lowest position). JSON Schema validation happens in Python
-- (tracelab.suite.args_valid) over exactly these rows.
WITH params AS (
    SELECT episode_id, name, arg_min_null(parameters, position)::VARCHAR AS parameters
    FROM chk_defs_in
    WHERE name IN (SELECT tool FROM p_args_valid WHERE from_definitions)
    GROUP BY ALL
),
-- the wide columns of the calls of the asked tools only (chk_calls holds no args)
calls AS (
    SELECT episode_id, call_index, call_step_idx, tool_name, args::VARCHAR AS args, args_text
    FROM chk_calls_in
    WHERE tool_name IN (SELECT tool FROM p_args_valid)
)
SELECT p.unit_id, s.episode_id, c.call_index, c.call_step_idx, c.args, c.args_text,
       CASE WHEN p.from_definitions THEN d.parameters END AS parameters
FROM p_args_valid p
JOIN chk_sel s ON s.case_id = p.case_id
LEFT JOIN calls c ON c.episode_id = s.episode_id AND c.tool_name = p.tool
LEFT JOIN params d ON d.episode_id = s.episode_id AND d.name = p.tool
