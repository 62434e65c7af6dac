-- The transcript fragments (trace-format §4, as the `transcript` view lists them) of the
-- selected runs that can decide a must_mention or must_not_leak result, lower-cased once with
-- DuckDB's lower(): chk_transcript(episode_id, ltext).
-- A needle matches when it occurs inside one fragment, so a fragment that contains none of the
-- needles decides nothing and is left out: $needles (tracelab.suite.needles.prefilter_re2) is
-- found in every text that contains one. One pass over the steps keeps those whose fields
-- (joined) match $needles, or whose data can hold a needle: its lowered JSON text matches
-- $needles, or it has a backslash (an escape: some decoded text differs from the stored one),
-- or $numeric (a needle could occur inside a number, whose text json_tree renders afresh).
-- Without a backslash, every string and object key of the stored text is its decoded self.
-- json_tree, the costly part, then runs on the data that can hold a needle, once per step.
CREATE OR REPLACE TEMP TABLE chk_transcript AS
WITH scanned AS (
    SELECT episode_id, text, name, error, data,
           regexp_matches(lower(concat_ws(chr(0), text, name, error)), $needles) AS fields_hit,
           data IS NOT NULL AND ($numeric OR contains(data::VARCHAR, '\')
                                 OR regexp_matches(lower(data::VARCHAR), $needles)) AS data_hit
    FROM steps
    WHERE episode_id IN (SELECT episode_id FROM chk_runs)
),
candidates AS (
    SELECT episode_id, text, name, error, CASE WHEN data_hit THEN data END AS data
    FROM scanned
    WHERE fields_hit OR data_hit
),
fragments AS (
    SELECT episode_id, unnest([input, output, error]) AS text
    FROM episodes
    WHERE episode_id IN (SELECT episode_id FROM chk_runs)
    UNION ALL
    SELECT episode_id, unnest([text, name, error])
    FROM candidates
    UNION ALL
    -- the leaves of `data` (strings decoded, numbers and booleans as their JSON text) and its
    -- object keys; array positions are not keys (duckdb-notes §10)
    SELECT s.episode_id, t.text
    FROM candidates s,
         LATERAL (
             SELECT unnest([
                 CASE WHEN type = 'VARCHAR' THEN json_extract_string(value, '$')
                      WHEN type NOT IN ('OBJECT', 'ARRAY', 'NULL') THEN value::VARCHAR END,
                 CASE WHEN fullkey <> path || '[' || key || ']' THEN key END]) AS text
             FROM json_tree(s.data)
         ) t
    WHERE s.data IS NOT NULL
)
SELECT episode_id, lower(text) AS ltext
FROM fragments
WHERE text IS NOT NULL AND regexp_matches(lower(text), $needles);
