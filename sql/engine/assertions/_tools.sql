-- Calls, definitions and per-tool facts of the selected runs, with the suite's `tools:`
-- effect overrides applied (docs/trace-format.md §3): exact name first, then the first matching glob
-- in suite order, for calls and definitions alike.

-- chk_names: every tool name of the selected runs (and of must_not_write) once, with its override
-- (NULL: none) and the store's registry effect (view calls.sql; NULL: none): what chk_calls,
-- chk_defs and the matchers look up (with `--since`, the new runs' names, not every stored
-- call's and definition's). Name patterns are matched here, once per distinct name, never once
-- per call: DuckDB compiles a pattern that is not a constant for every row it meets.
CREATE OR REPLACE TEMP TABLE chk_names AS
WITH names AS (
    SELECT DISTINCT tool_name AS name FROM chk_calls_in WHERE tool_name IS NOT NULL
    UNION
    SELECT DISTINCT name FROM chk_defs_in
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
-- suite's override, its recorded effect (step, then definition), the store's registry.
-- chk_calls and chk_defs are tables, copied once. As views (a scan and a join with the few names,
-- 0.1 CPU s less at 100k runs) DuckDB 2.0.1 filtered them wrongly on a Delta store: a family's
-- `WHERE is_executed_write(effect, status)` found no row where the view listed one with effect
-- 'write' from the registry (tests/spark/test_spark_engine.py::test_registry_effects_give_the_same_verdicts;
-- tests/effects/test_effects_parquet_store.py). The wide columns (args,
-- args_text, parameters) are left out: the few queries that read them join chk_calls_in / chk_defs_in.
CREATE OR REPLACE TEMP TABLE chk_calls AS
SELECT c.episode_id, c.call_index, c.call_step_idx, c.tool_name, c.status,
       resolved_effect(o.override, c.effect, o.registry) AS effect
FROM chk_calls_in c
LEFT JOIN chk_names o ON o.name = c.tool_name;

CREATE OR REPLACE TEMP TABLE chk_defs AS
SELECT d.episode_id, d.position, d.name, resolved_effect(o.override, d.effect, o.registry) AS effect
FROM chk_defs_in d
LEFT JOIN chk_names o ON o.name = d.name;

-- One row per (run, tool name) that was called or defined, for the pairs the families read: a
-- tools_called, writes or must_not_write tool in a run its case selects, and a name of a
-- trace_must_call_tool matcher that counts by availability in a run its case selects (every
-- other pair would be computed and never read). def_effect is the effect of the definition
-- with the lowest position (override first).
CREATE OR REPLACE TEMP TABLE chk_tools AS
WITH asked AS (
    -- a pair asked twice is kept twice: it is only looked up (semi-joins), never counted
    SELECT s.episode_id, p.tool AS name FROM p_tools_called p JOIN chk_sel s ON s.case_id = p.case_id
    UNION ALL SELECT s.episode_id, p.tool FROM p_writes p JOIN chk_sel s ON s.case_id = p.case_id
    UNION ALL SELECT s.episode_id, p.tool FROM p_must_not_write p JOIN chk_sel s ON s.case_id = p.case_id
    UNION ALL SELECT s.episode_id, n.name
    FROM p_call_counts p
    JOIN p_matcher_branches b ON b.matcher_id = p.matcher_id
    JOIN chk_branch_names n ON n.branch_id = b.branch_id
    JOIN chk_sel s ON s.case_id = p.case_id
    WHERE p.by_availability
),
called AS (
    SELECT c.episode_id, c.tool_name AS name, count(*) AS n_calls,
           bool_or(c.effect = 'write') AS call_write,
           bool_or(is_executed_write(c.effect, c.status)) AS exec_write,
           min(c.call_step_idx) FILTER (WHERE is_executed_write(c.effect, c.status)) AS exec_write_step
    FROM chk_calls c SEMI JOIN asked a ON a.episode_id = c.episode_id AND a.name = c.tool_name
    GROUP BY ALL
),
defined AS (
    SELECT d.episode_id, d.name, arg_min_null(d.effect, d.position) AS def_effect
    FROM chk_defs d SEMI JOIN asked a ON a.episode_id = d.episode_id AND a.name = d.name
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
