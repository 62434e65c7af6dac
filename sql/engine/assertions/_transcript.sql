-- The transcript fragments (docs/trace-format.md §4, as the `transcript` view lists them) of the
-- selected runs that can decide a must_mention or must_not_leak result, lower-cased once with
-- DuckDB's lower(): chk_transcript(episode_id, pos, ltext). pos orders a run's fragments for
-- the failure location, as the run went: -1 for its input, the step's idx, NULL for its output
-- and error (a leak found first there is located at no step).
-- A needle matches when it occurs inside one fragment, so a fragment that contains none of the
-- needles decides nothing and is left out: $needles (tracelab.suite.needles.prefilter_re2) is
-- found in every text that contains one. One pass over the steps keeps those whose fields
-- (joined) match $needles, or whose data can hold a needle: its lowered JSON text matches
-- $needles, or it has a backslash (an escape: some decoded text differs from the stored one),
-- or $numeric (a needle could occur inside a number, whose stored text may differ from the
-- rendered one). Without a backslash, every string and object key of the stored text is its
-- decoded self.
-- The leaves and keys of a data document are read as the view reads them (macros json_tokens and
-- json_token_text of sql/store/views/rules.sql).
CREATE OR REPLACE TEMP TABLE chk_transcript AS
WITH scanned AS (
    SELECT episode_id, idx, text, name, error, data,
           regexp_matches(lower(concat_ws(chr(0), text, name, error)), $needles) AS fields_hit,
           data IS NOT NULL AND ($numeric OR contains(data::VARCHAR, '\')
                                 OR regexp_matches(lower(data::VARCHAR), $needles)) AS data_hit
    FROM steps
    WHERE episode_id IN (SELECT episode_id FROM chk_runs)
),
fragments AS (
    SELECT episode_id, unnest([-1, NULL, NULL]) AS pos, unnest([input, output, error]) AS text
    FROM episodes
    WHERE episode_id IN (SELECT episode_id FROM chk_runs)
    UNION ALL
    SELECT episode_id, idx AS pos,
           unnest([text, name, error]
                  || CASE WHEN data_hit THEN list_transform(json_tokens(data),
                                                            lambda token: json_token_text(token))
                     ELSE [] END)
    FROM scanned
    WHERE fields_hit OR data_hit
)
SELECT episode_id, pos, lower(text) AS ltext
FROM fragments
WHERE text IS NOT NULL AND regexp_matches(lower(text), $needles);
