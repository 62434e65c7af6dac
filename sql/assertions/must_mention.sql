-- expect.must_mention[i]: the string occurs, case-insensitively (DuckDB lower()), inside one
-- transcript fragment. Literal matching (contains), never LIKE.
-- chk_transcript keeps the fragments that hold a needle of either family; $needles_re2
-- (tracelab.suite.needles.query_params) is found in every fragment that holds one of this
-- family's. The exact test then runs once per distinct text and needle (transcripts repeat
-- their fragments), not once per fragment and needle.
WITH needles AS (
    SELECT unit_id, case_id, needle, lower(needle) AS lneedle FROM p_must_mention
),
hits AS (
    SELECT episode_id, ltext FROM chk_transcript WHERE regexp_matches(ltext, $needles_re2)
),
matched AS (
    SELECT n.lneedle, t.ltext
    FROM (SELECT DISTINCT lneedle FROM needles) n
    JOIN (SELECT DISTINCT ltext FROM hits) t ON contains(t.ltext, n.lneedle)
),
found AS (
    SELECT DISTINCT n.unit_id, s.episode_id
    FROM needles n
    JOIN matched m ON m.lneedle = n.lneedle
    JOIN hits h ON h.ltext = m.ltext
    JOIN chk_sel s ON s.case_id = n.case_id AND s.episode_id = h.episode_id
)
SELECT n.unit_id, s.episode_id,
       f.episode_id IS NOT NULL AS passed,
       'yes' AS exercised,
       CASE WHEN f.episode_id IS NULL THEN 'does not mention ' || to_json(n.needle)::VARCHAR END
           AS reason
FROM needles n
JOIN chk_sel s ON s.case_id = n.case_id
LEFT JOIN found f ON f.unit_id = n.unit_id AND f.episode_id = s.episode_id
