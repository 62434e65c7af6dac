-- The (unit, run) pairs whose must_mention / must_not_leak string occurs in the run's
-- transcript: case-insensitively (DuckDB lower() on both sides), as a literal substring of
-- one fragment (contains, never LIKE). chk_transcript already holds only the fragments that
-- can hold some string of either family (the RE2 prefilter of _transcript.sql), and
-- transcripts repeat their fragments: the exact test runs once per distinct text and string.
-- step_idx: the step of the run's first fragment holding the string (chk_transcript.pos): NULL
-- when that is the run's input, or when only its output or error holds it.
CREATE OR REPLACE TEMP TABLE chk_needle_found AS
WITH needles AS (
    SELECT unit_id, case_id, lower(needle) AS lneedle FROM p_must_mention
    UNION ALL
    SELECT unit_id, case_id, lower(needle) AS lneedle FROM p_must_not_leak
),
matched AS (
    SELECT n.lneedle, t.ltext
    FROM (SELECT DISTINCT lneedle FROM needles) n
    JOIN (SELECT DISTINCT ltext FROM chk_transcript) t ON contains(t.ltext, n.lneedle)
),
-- per string, the runs holding it and their first position: computed before any case is
-- joined (materialized: otherwise the planner joins every unit's runs to the fragments first)
hits AS MATERIALIZED (
    SELECT m.lneedle, h.episode_id, min(h.pos) AS pos
    FROM matched m
    JOIN chk_transcript h ON h.ltext = m.ltext
    GROUP BY m.lneedle, h.episode_id
),
-- then the cases of those runs (materialized: otherwise the planner pairs every selected run
-- with each of its case's strings first, millions of rows, and only then looks for the hits)
cased AS MATERIALIZED (
    SELECT h.lneedle, h.pos, s.case_id, s.episode_id
    FROM hits h
    JOIN chk_sel s ON s.episode_id = h.episode_id
)
SELECT n.unit_id, c.episode_id, CASE WHEN min(c.pos) >= 0 THEN min(c.pos) END AS step_idx
FROM cased c
JOIN needles n ON n.lneedle = c.lneedle AND n.case_id = c.case_id
GROUP BY n.unit_id, c.episode_id;
