-- Tool effects from the store's registry (docs/trace-format.md §6), resolved for a list of tool names:
-- an exact pattern first, then the first matching glob in `added_at` order. Every name is
-- matched once, never once per call (a pattern that is not a constant is compiled per row).
CREATE OR REPLACE MACRO registry_effects(names) AS TABLE
SELECT n.name, first(t.effect ORDER BY t.pattern <> n.name, t.added_at, t.seq) AS effect
FROM (SELECT DISTINCT unnest(names) AS name) n
JOIN tool_effects t ON t.pattern = n.name OR (t.regex IS NOT NULL AND regexp_full_match(n.name, t.regex))
GROUP BY n.name;

-- `tool_calls` with every effect resolved (docs/trace-format.md §6, macro resolved_effect of rules.sql,
-- with no suite override): recorded (step, then definition), else the registry's;
-- `effect_source` says which. A declaration counts at once, no re-ingest.
CREATE OR REPLACE VIEW calls AS
SELECT c.* REPLACE (
           resolved_effect(NULL, c.effect, r.effect) AS effect,
           CASE WHEN c.effect IS NOT NULL THEN c.effect_source
                WHEN r.effect IS NOT NULL THEN 'registry' END AS effect_source)
FROM tool_calls c
LEFT JOIN registry_effects((SELECT list(DISTINCT tool_name) FROM tool_calls WHERE effect IS NULL)) r
       ON c.effect IS NULL AND r.name = c.tool_name;
