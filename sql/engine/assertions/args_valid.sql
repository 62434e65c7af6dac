-- args_valid, the part SQL can do: the calls of the tool in each selected run (one row with a
-- NULL call_index for a run without any), with the recorded `parameters` of the run's
-- definition of the tool (lowest position). JSON Schema validation happens in Python
-- (tracelab.suite.args_valid) over exactly these rows.
-- each unit's tool in each run its case selects: only their calls' args and definitions'
-- parameters are read (the name filter is pushed into the scan, the runs' semi-join after it)
WITH asked AS (
    SELECT p.unit_id, p.tool, p.from_definitions, s.episode_id
    FROM p_args_valid p JOIN chk_sel s ON s.case_id = p.case_id
),
params AS (
    SELECT d.episode_id, d.name, arg_min_null(d.parameters, d.position)::VARCHAR AS parameters
    FROM chk_defs_in d
    SEMI JOIN asked a ON a.episode_id = d.episode_id AND a.tool = d.name AND a.from_definitions
    WHERE d.name IN (SELECT tool FROM p_args_valid WHERE from_definitions)
    GROUP BY ALL
),
calls AS (
    -- the recorded text only where it did not parse (tracelab.engine.args_valid.args_problem)
    SELECT c.episode_id, c.call_index, c.call_step_idx, c.tool_name, c.args::VARCHAR AS args,
           CASE WHEN c.args IS NULL THEN c.args_text END AS args_text
    FROM chk_calls_in c
    SEMI JOIN asked a ON a.episode_id = c.episode_id AND a.tool = c.tool_name
    WHERE c.tool_name IN (SELECT tool FROM p_args_valid)
)
SELECT a.unit_id, a.episode_id, c.call_index, c.call_step_idx, c.args, c.args_text,
       CASE WHEN a.from_definitions THEN d.parameters END AS parameters
FROM asked a
LEFT JOIN calls c ON c.episode_id = a.episode_id AND c.tool_name = a.tool
LEFT JOIN params d ON d.episode_id = a.episode_id AND d.name = a.tool
