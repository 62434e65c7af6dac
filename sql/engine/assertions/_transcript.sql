-- The transcript fragments (docs/trace-format.md §4, as the `transcript` view lists them) of the
-- selected runs that can decide a must_mention or must_not_leak result, lower-cased once with
-- DuckDB's lower(): chk_transcript(episode_id, pos, ltext). pos orders a run's fragments for
-- the failure location, as the run went: -1 for its input, the step's idx, NULL for its output
-- and error (a leak found first there is located at no step).
-- A needle matches when it occurs inside one fragment, so a fragment that contains none of the
-- needles decides nothing and is left out: $needles (tracelab.engine.needles.prefilter_re2 over
-- lower_moved) is found in every text whose lower() contains one, searched in the text as
-- stored: only the fragments kept are lower-cased. One pass over the steps keeps those with a
-- field that matches $needles, or whose data can hold a needle: its JSON text matches $needles,
-- or it has a backslash (an escape: some decoded text differs from the stored one), or $numeric
-- (a needle could occur inside a number, whose stored text may differ from the rendered one).
-- Without a backslash, every string and object key of the stored text is its decoded self (its
-- decoded text lies inside its stored text): such a token is tested as stored and decoded only
-- when it matches; every other token (a number, true, false, an escaped string) is decoded.
-- The leaves and keys of a data document are read as the view reads them (macros json_tokens and
-- json_token_text of sql/store/views/rules.sql).
CREATE OR REPLACE TEMP TABLE chk_transcript AS
WITH scanned AS (
    SELECT episode_id, idx, text, name, error, data,
           data IS NOT NULL AND ($numeric OR contains(data::VARCHAR, '\')
                                 OR regexp_matches(data::VARCHAR, $needles)) AS data_hit
    FROM chk_steps_in
),
hit AS MATERIALIZED (
    -- read twice below, computed once (only the few steps kept are held); each field searched
    -- apart: no concatenated copy of the three
    SELECT * FROM scanned
    WHERE data_hit OR coalesce(regexp_matches(text, $needles), false)
       OR coalesce(regexp_matches(name, $needles), false)
       OR coalesce(regexp_matches(error, $needles), false)
),
tokens AS (
    -- unnested before testing: a pattern inside a lambda is compiled once per list
    SELECT episode_id, idx, unnest(json_tokens(data)) AS token FROM hit WHERE data_hit
),
fragments AS (
    SELECT episode_id, unnest([-1, NULL, NULL]) AS pos, unnest([input, output, error]) AS text
    FROM chk_episodes_in
    UNION ALL
    SELECT episode_id, idx AS pos, unnest([text, name, error]) AS text
    FROM hit
    UNION ALL
    SELECT episode_id, idx AS pos, json_token_text(token) AS text
    FROM tokens
    WHERE NOT starts_with(token, '"') OR contains(token, '\') OR regexp_matches(token, $needles)
)
SELECT episode_id, pos, lower(text) AS ltext
FROM fragments
WHERE text IS NOT NULL AND regexp_matches(text, $needles);
