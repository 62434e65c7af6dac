-- The report's texts and their string table (tracelab.view.runs), from view_steps, view_withheld
-- (a withheld step's notices and what it shows instead), view_failed (failures at a step:
-- `slot` the place of the assertion's name, its reason's next) and view_own (each run's own
-- texts, in order of use).
--
-- view_texts: what each step shows, a withheld step as view_withheld says
CREATE OR REPLACE TEMP VIEW view_texts AS
SELECT s.episode_id, s.run, s.idx, s.kind, s.status, s.effect, s.effect_source, s.duration_ms, s.offset_ms,
       s.tokens, w.w_data, w.w_text, w.w_error,
       CASE WHEN w.idx IS NULL THEN s.tool ELSE w.tool END AS tool,
       CASE WHEN w.idx IS NULL THEN s.sent ELSE w.sent END AS sent,
       CASE WHEN w.idx IS NULL THEN s.more_sent ELSE w.more_sent END AS more_sent,
       CASE WHEN w.idx IS NULL THEN s.said ELSE w.said END AS said,
       CASE WHEN w.idx IS NULL THEN s.more_said ELSE w.more_said END AS more_said,
       CASE WHEN w.idx IS NULL THEN s.err ELSE w.err END AS err,
       CASE WHEN w.idx IS NULL THEN s.more_err ELSE w.more_err END AS more_err
FROM view_steps s
LEFT JOIN view_withheld w USING (episode_id, idx);

-- view_failed_at: the failures at a shown step, with its run's place
CREATE OR REPLACE TEMP TABLE view_failed_at AS
SELECT s.run, s.idx, f.slot, f.assertion, f.reason
FROM view_failed f
JOIN view_steps s USING (episode_id, idx);

-- view_strings: every text the runs use, numbered (`n`, from 0) in order of first use: run by run,
-- a run's own texts first (view_own: the first use of each), then its steps' by idx, each step's
-- in the order of its slots (`used_at`: run, then idx, then slot, in one number)
CREATE OR REPLACE TEMP TABLE view_strings AS
WITH steps AS (
    SELECT *, (run::HUGEINT << 72) + ((idx::HUGEINT + 2147483649) << 32) AS pos FROM view_texts
), failed AS (
    SELECT *, (run::HUGEINT << 72) + ((idx::HUGEINT + 2147483649) << 32) AS pos FROM view_failed_at
), used AS (
    SELECT (run::HUGEINT << 72) + slot AS used_at, value FROM view_own
    UNION ALL SELECT pos + 0, w_data FROM steps
    UNION ALL SELECT pos + 1, w_text FROM steps
    UNION ALL SELECT pos + 2, w_error FROM steps
    UNION ALL SELECT pos + 3, sent FROM steps
    UNION ALL SELECT pos + 4, said FROM steps
    UNION ALL SELECT pos + 5, err FROM steps
    UNION ALL SELECT pos + 6, tool FROM steps
    UNION ALL SELECT pos + $last, kind FROM steps
    UNION ALL SELECT pos + $last + 1, status FROM steps
    UNION ALL SELECT pos + $last + 2, effect FROM steps
    UNION ALL SELECT pos + $last + 3, effect_source FROM steps
    UNION ALL SELECT pos + slot, assertion FROM failed
    UNION ALL SELECT pos + slot + 1, reason FROM failed
)
SELECT value, row_number() OVER (ORDER BY min(used_at)) - 1 AS n
FROM used
WHERE value IS NOT NULL
GROUP BY value
