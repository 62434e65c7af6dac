-- The steps of the report's runs (tracelab.view.runs), read once from view_shown_steps (the
-- steps of show_runs as sql/show/steps.sql reads them) with each run's place (view_runs.run):
-- what each step shows (view_shown: sql/view/runs_shown.sql): whole (`whole`) while the texts of
-- the steps before it in the file's order (run, then idx) and its own add up to at most $cap
-- bytes (UTF-8: the file's size, whatever the script), else clipped to $clip characters each.
--
-- `marked`: whether its name, text, data or error may hold one of the leaked strings $needles:
-- it holds the string, both lowered (DuckDB's lower), or the string and the field both have a
-- character outside ASCII (where DuckDB's lower and Python's may differ), or its data has an
-- escape (\u00df for ß: the string may show only once decoded). Only a marked step keeps its
-- fields whole, for Python to look at them one by one (tracelab.show.fields_withheld).
CREATE OR REPLACE TEMP TABLE view_steps AS
WITH joined AS (
    -- the fields one text apart, looked at once per step whatever the number of strings
    SELECT *, lower(joined) AS lowered
    FROM (SELECT s.episode_id, r.run, s.idx, s.kind, s.name, s.text, s.data, s.error, s.status, s.effect,
                 s.effect_source, s.duration_ms, s.offset_ms, s.tokens,
                 concat_ws(chr(0), s.name, s.text, s.data, s.error) AS joined
          FROM view_shown_steps s
          JOIN view_runs r USING (episode_id))
), steps AS (
    SELECT episode_id, run, idx, kind, name, text, data, error, status, effect, effect_source, duration_ms,
           offset_ms, tokens,
           coalesce((len($needles::VARCHAR[]) > 0 AND contains(data, '\'))
                    OR list_bool_or([contains(lowered, lower(n)) for n in $needles::VARCHAR[]])
                    OR (list_bool_or([strlen(n) <> length(n) for n in $needles::VARCHAR[]])
                        AND strlen(joined) <> length(joined)), false) AS marked
    FROM joined
), budget AS (
    SELECT *, sum(coalesce(strlen(view_sent(kind, data)), 0) + coalesce(strlen(view_said(kind, text, data)), 0)
                  + coalesce(strlen(error), 0)) OVER (ORDER BY run, idx ROWS UNBOUNDED PRECEDING) <= $cap AS whole
    FROM steps
)
SELECT episode_id, run, idx, kind, status, effect, effect_source, duration_ms, offset_ms, tokens, whole,
       unnest(view_shown(kind, name, text, data, error, CASE WHEN whole THEN $cap ELSE $clip END)),
       marked, CASE WHEN marked THEN name END AS name, CASE WHEN marked THEN text END AS text,
       CASE WHEN marked THEN data END AS data, CASE WHEN marked THEN error END AS error
FROM budget
