-- Calls, definitions and per-tool facts of the selected runs, with the suite's `tools:`
-- effect overrides applied (docs/trace-format.md §3): exact name first, then the first matching glob
-- in suite order, for calls and definitions alike.

-- chk_names: every tool name of the store (and of must_not_write) once, with its override
-- (NULL: none) and the store's registry effect (view calls.sql; NULL: none). Name patterns are
-- matched here, once per distinct name, never once per call: DuckDB compiles a pattern that is
-- not a constant for every row it meets.
CREATE OR REPLACE TEMP TABLE chk_names AS
WITH names AS (
    SELECT DISTINCT tool_name AS name FROM tool_calls WHERE tool_name IS NOT NULL
    UNION
    SELECT DISTINCT name FROM tool_definitions
    UNION
    SELECT tool FROM p_must_not_write
), overrides AS (
    SELECT n.name, first(t.effect ORDER BY t.is_glob, t.pos) AS override
    FROM names n LEFT JOIN p_tools t ON regexp_full_match(n.name, t.regex)
    GROUP BY n.name
)
SELECT o.name, o.override, r.effect AS registry
FROM overrides o
LEFT JOIN registry_effects((SELECT list(name) FROM names)) r ON r.name = o.name;

-- chk_branch_names: the tool names each matcher branch can match (docs/suites.md §8): its exact name,
-- or every stored name its glob matches (once per distinct name, as above).
CREATE OR REPLACE TEMP TABLE chk_branch_names AS
SELECT branch_id, tool AS name FROM p_matcher_branches WHERE tool IS NOT NULL
UNION ALL
SELECT b.branch_id, n.name
FROM p_matcher_branches b JOIN chk_names n ON regexp_full_match(n.name, b.tool_re)
WHERE b.tool_re IS NOT NULL;

-- A call's effect (docs/trace-format.md §6, macro resolved_effect of sql/store/views/rules.sql): the
-- suite's override, its recorded effect (step, then definition), the store's registry. The wide
-- columns (args, args_text, parameters) are not copied: the few queries that read them join
-- chk_calls_in / chk_defs_in on (episode_id, call_index / position).
CREATE OR REPLACE TEMP TABLE chk_calls AS
SELECT c.episode_id, c.call_index, c.call_step_idx, c.tool_name, c.status,
       resolved_effect(o.override, c.effect, o.registry) AS effect
FROM chk_calls_in c
LEFT JOIN chk_names o ON o.name = c.tool_name;

CREATE OR REPLACE TEMP TABLE chk_defs AS
SELECT d.episode_id, d.position, d.name, resolved_effect(o.override, d.effect, o.registry) AS effect
FROM chk_defs_in d
LEFT JOIN chk_names o ON o.name = d.name;

-- One row per (run, tool name) that was called or defined, for the names the suite's
-- tools_called, writes, must_not_write and tool matchers ask about. def_effect is the effect
-- of the definition with the lowest position (override first).
CREATE OR REPLACE TEMP TABLE chk_tools AS
WITH asked AS (
    SELECT tool AS name FROM p_tools_called
    UNION SELECT tool FROM p_writes
    UNION SELECT tool FROM p_must_not_write
    UNION SELECT name FROM chk_branch_names
),
called AS (
    SELECT episode_id, tool_name AS name, count(*) AS n_calls,
           bool_or(effect = 'write') AS call_write,
           bool_or(is_executed_write(effect, status)) AS exec_write,
           min(call_step_idx) FILTER (WHERE is_executed_write(effect, status)) AS exec_write_step
    FROM chk_calls WHERE tool_name IN (SELECT name FROM asked)
    GROUP BY ALL
),
defined AS (
    SELECT episode_id, name, arg_min_null(effect, position) AS def_effect
    FROM chk_defs WHERE name IN (SELECT name FROM asked)
    GROUP BY ALL
)
SELECT episode_id, name,
       coalesce(c.n_calls, 0) AS n_calls,
       d.name IS NOT NULL AS defined,
       d.def_effect,
       coalesce(c.call_write, false) AS call_write,
       coalesce(c.exec_write, false) AS exec_write,
       c.exec_write_step
FROM called c FULL JOIN defined d USING (episode_id, name);
