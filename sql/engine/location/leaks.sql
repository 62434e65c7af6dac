-- Where each leak is (docs/cli.md §6): for every (unit, run, string) of
-- loc_leaks, the transcript fragments (the `transcript` view, as must_not_leak searches them:
-- case-insensitive, a literal substring of one fragment) that hold the string, as
-- (unit_id, episode_id, needle, step_idx, origin, rank). Never the fragment's text.
-- rank orders a run's fragments as the run went: its input, then its steps by idx, then its
-- output and its error; the first (rank 1) is the leak's location.
-- loc_transcript is the `transcript` view over the runs of loc_leaks only (scope.sql).
WITH fragments AS (
    SELECT episode_id, origin, idx, lower(text) AS ltext
    FROM loc_transcript
)
SELECT l.unit_id, l.episode_id, l.needle, f.idx AS step_idx, f.origin,
       row_number() OVER (
           PARTITION BY l.unit_id, l.episode_id
           ORDER BY CASE f.origin WHEN 'input' THEN 0 WHEN 'output' THEN 2 WHEN 'error' THEN 3 ELSE 1 END,
                    f.idx, f.origin
       ) AS rank
FROM loc_leaks l
JOIN fragments f ON f.episode_id = l.episode_id AND contains(f.ltext, lower(l.needle))
