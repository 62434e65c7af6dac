-- The transcript fragments (docs/trace-format.md §4, as the `transcript` view lists them) of the
-- selected runs that can decide a must_mention or must_not_leak result, lower-cased once with
-- DuckDB's lower(): chk_transcript(episode_id, pos, ltext). pos orders a run's fragments for
-- the failure location, as the run went: -1 for its input, the step's idx, NULL for its output
-- and error (a leak found first there is located at no step).
-- A needle matches when it occurs inside one fragment, so a fragment that contains none of the
-- needles decides nothing and is left out: $needles (tracelab.engine.needles.prefilter_re2 over
-- lower_moved) is found in every text whose lower() contains one, searched in the text as
-- stored: only the fragments kept are lower-cased. A step's text, name and error are each kept
-- when they match $needles (one scan per field: a scan that kept the steps with some field
-- matching would have to hold them and search their fields again); its data is read when it can
-- hold a needle: its JSON text matches $doc_needles ($needles, or a backslash: an escape, whose
-- decoded text differs from the stored one), or $numeric (a needle could occur inside a number,
-- whose stored text may differ from the rendered one).
-- A data document without a backslash holds each string and object key as its decoded self,
-- between two of its double quotes (a quote inside a string would be escaped): the text between
-- its 2nd and 3rd quote, its 4th and 5th, ... are its strings, found with string_split, no JSON
-- parsed. Its numbers, true and false are read only when a needle could occur in their rendered
-- text ($scalars); a document with a backslash, or any document when $scalars, is read token by
-- token as the view reads it (macros json_tokens and json_token_text of
-- sql/store/views/rules.sql): a string token without a backslash is decoded only when it matches
-- $needles as stored (its decoded text lies inside its stored text), every other token always.
CREATE OR REPLACE TEMP TABLE chk_transcript AS
WITH documents AS MATERIALIZED (
    -- read twice below, computed once (only the few documents kept are held)
    SELECT episode_id, idx, data, $scalars OR contains(data::VARCHAR, '\') AS tokenized
    FROM chk_steps_in
    WHERE data IS NOT NULL AND ($numeric OR regexp_matches(data::VARCHAR, $doc_needles))
),
tokens AS (
    -- unnested before testing: a pattern inside a lambda is compiled once per list
    SELECT episode_id, idx, unnest(json_tokens(data)) AS token FROM documents WHERE tokenized
),
-- the fragments that are still to be searched for $needles
unsearched AS (
    SELECT episode_id, unnest([-1, NULL, NULL]) AS pos, unnest([input, output, error]) AS text
    FROM chk_episodes_in
    UNION ALL
    SELECT episode_id, idx AS pos, json_token_text(token) AS text
    FROM tokens
    WHERE NOT starts_with(token, '"') OR contains(token, '\') OR regexp_matches(token, $needles)
    UNION ALL
    SELECT episode_id, idx AS pos, unnest(string_split(data::VARCHAR, '"')[2:-1:2]) AS text
    FROM documents
    WHERE NOT tokenized
),
fragments AS (
    SELECT * FROM unsearched WHERE text IS NOT NULL AND regexp_matches(text, $needles)
    UNION ALL
    SELECT episode_id, idx, text FROM chk_steps_in WHERE regexp_matches(text, $needles)
    UNION ALL
    SELECT episode_id, idx, name FROM chk_steps_in WHERE regexp_matches(name, $needles)
    UNION ALL
    SELECT episode_id, idx, error FROM chk_steps_in WHERE regexp_matches(error, $needles)
)
SELECT episode_id, pos, lower(text) AS ltext
FROM fragments;
