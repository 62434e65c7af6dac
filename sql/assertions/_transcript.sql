-- The transcript fragments of the selected runs (trace-format §4, the `transcript` view),
-- lower-cased once with DuckDB's lower() for the case-insensitive mention and leak checks.
CREATE OR REPLACE TEMP TABLE chk_transcript AS
SELECT episode_id, lower(text) AS ltext
FROM transcript
WHERE episode_id IN (SELECT episode_id FROM chk_runs);
