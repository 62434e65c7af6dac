-- Calls, definitions and per-tool facts of the selected runs, with the suite's `tools:`
-- effect overrides applied (trace-format §3): exact name first, then the first matching glob
-- in suite order, for calls and definitions alike.
CREATE OR REPLACE TEMP TABLE chk_override AS
WITH names AS (
    SELECT tool_name AS name FROM tool_calls
    WHERE tool_name IS NOT NULL AND episode_id IN (SELECT episode_id FROM chk_runs)
    UNION
    SELECT name FROM tool_definitions WHERE episode_id IN (SELECT episode_id FROM chk_runs)
    UNION
    SELECT tool FROM p_must_not_write
)
SELECT n.name, first(t.effect ORDER BY t.is_glob, t.pos) AS effect
FROM names n JOIN p_tools t ON regexp_full_match(n.name, t.regex)
GROUP BY n.name;

CREATE OR REPLACE TEMP TABLE chk_calls AS
SELECT c.episode_id, c.call_index, c.tool_name, c.args, c.args_text, c.status,
       coalesce(o.effect, c.effect) AS effect
FROM tool_calls c
LEFT JOIN chk_override o ON o.name = c.tool_name
WHERE c.episode_id IN (SELECT episode_id FROM chk_runs);

CREATE OR REPLACE TEMP TABLE chk_defs AS
SELECT d.episode_id, d.position, d.name, coalesce(o.effect, d.effect) AS effect, d.parameters
FROM tool_definitions d
LEFT JOIN chk_override o ON o.name = d.name
WHERE d.episode_id IN (SELECT episode_id FROM chk_runs);

-- One row per (run, tool name) that was called or defined. def_effect is the effect of the
-- definition with the lowest position (override first).
CREATE OR REPLACE TEMP TABLE chk_tools AS
WITH called AS (
    SELECT episode_id, tool_name AS name, count(*) AS n_calls,
           bool_or(effect = 'write') AS call_write,
           bool_or(effect = 'write' AND status = 'ok') AS exec_write
    FROM chk_calls WHERE tool_name IS NOT NULL
    GROUP BY ALL
),
defined AS (
    SELECT episode_id, name, first(effect ORDER BY position) AS def_effect
    FROM chk_defs
    GROUP BY ALL
)
SELECT episode_id, name,
       coalesce(c.n_calls, 0) AS n_calls,
       d.name IS NOT NULL AS defined,
       d.def_effect,
       coalesce(c.call_write, false) AS call_write,
       coalesce(c.exec_write, false) AS exec_write
FROM called c FULL JOIN defined d USING (episode_id, name);

-- Tool availability by name (trace-format §4), from a LEFT JOIN of chk_tools and chk_runs.
CREATE OR REPLACE TEMP MACRO chk_availability(n_calls, defined, declared) AS
    CASE WHEN coalesce(n_calls, 0) > 0 OR (declared AND coalesce(defined, false)) THEN 'available'
         WHEN declared THEN 'unavailable'
         ELSE 'unknown' END;
