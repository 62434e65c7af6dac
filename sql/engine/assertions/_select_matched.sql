-- The runs of the cases with a `select` (docs/suites.md §1, §7), before their `where`: only the keys
-- filter; string keys are globs, given as RE2 patterns (tracelab.globs), and a NULL field
-- matches nothing; every listed tag must be present. _select_keys.sql then applies each case's
-- `where` (evaluated apart, with external access disabled: tracelab.suite.where.where_flags)
-- and adds the selected runs to chk_sel.
-- A pattern is matched once per distinct stored value, never once per run: DuckDB compiles a
-- pattern that is not a constant for every row it meets.
CREATE OR REPLACE TEMP TABLE chk_matched AS
WITH selecting AS (
    SELECT * FROM p_select WHERE has_select
),
combos AS (
    SELECT DISTINCT case_id, agent, agent_version, model FROM chk_selectable
),
case_ids AS (
    SELECT s.case_id, v.value FROM selecting s
    JOIN (SELECT DISTINCT case_id AS value FROM combos) v ON regexp_full_match(v.value, s.case_id_re)
),
agents AS (
    SELECT s.case_id, v.value FROM selecting s
    JOIN (SELECT DISTINCT agent AS value FROM combos) v ON regexp_full_match(v.value, s.agent_re)
),
versions AS (
    SELECT s.case_id, v.value FROM selecting s
    JOIN (SELECT DISTINCT agent_version AS value FROM combos) v
      ON regexp_full_match(v.value, s.agent_version_re)
),
models AS (
    SELECT s.case_id, v.value FROM selecting s
    JOIN (SELECT DISTINCT model AS value FROM combos) v ON regexp_full_match(v.value, s.model_re)
),
matched_combos AS (
    SELECT s.case_id AS selecting_case, s.tags, s.where_idx,
           c.case_id, c.agent, c.agent_version, c.model
    FROM selecting s
    CROSS JOIN combos c
    LEFT JOIN case_ids k ON k.case_id = s.case_id AND k.value = c.case_id
    LEFT JOIN agents a ON a.case_id = s.case_id AND a.value = c.agent
    LEFT JOIN versions v ON v.case_id = s.case_id AND v.value = c.agent_version
    LEFT JOIN models m ON m.case_id = s.case_id AND m.value = c.model
    WHERE (s.case_id_re IS NULL OR k.value IS NOT NULL)
      AND (s.agent_re IS NULL OR a.value IS NOT NULL)
      AND (s.agent_version_re IS NULL OR v.value IS NOT NULL)
      AND (s.model_re IS NULL OR m.value IS NOT NULL)
),
matched AS (
    SELECT m.selecting_case AS case_id, m.where_idx, e.episode_id, e.tools_declared
    FROM matched_combos m
    JOIN chk_selectable e
      ON e.case_id IS NOT DISTINCT FROM m.case_id AND e.agent IS NOT DISTINCT FROM m.agent
     AND e.agent_version IS NOT DISTINCT FROM m.agent_version
     AND e.model IS NOT DISTINCT FROM m.model
    WHERE len(m.tags) = 0 OR list_has_all(e.tags, m.tags)
)
SELECT * FROM matched
