-- Call/result pairing, set-based for the common case (trace-format §2, duckdb-notes §5):
-- an episode whose calls and results each carry distinct non-empty call ids, every result
-- matching an earlier call, pairs by a plain join. The steps of the others are marked `slow`
-- and paired by the sequential rule in Python (pairing.py), which adds to stage_pairs.
CREATE OR REPLACE TEMP TABLE stage_cr AS
WITH cr AS (
    SELECT line, idx, kind, name, call_id
    FROM stage_steps JOIN stage_keep USING (line)
    WHERE kind IN ('tool_call', 'tool_result')
), unclear AS (
    SELECT line FROM cr
    GROUP BY line, kind
    HAVING count(*) FILTER (WHERE coalesce(call_id, '') = '') > 0
        OR count(DISTINCT call_id) < count(*)
), unmatched AS (
    SELECT r.line
    FROM cr r
    LEFT JOIN cr c ON c.line = r.line AND c.kind = 'tool_call' AND c.call_id = r.call_id AND c.idx < r.idx
    WHERE r.kind = 'tool_result' AND c.line IS NULL
)
SELECT cr.*, cr.line IN (SELECT line FROM unclear UNION ALL SELECT line FROM unmatched) AS slow
FROM cr
ORDER BY line, idx;

CREATE OR REPLACE TEMP TABLE stage_pairs AS
SELECT r.line, c.idx AS call_idx, r.idx AS result_idx
FROM stage_cr r
JOIN stage_cr c ON c.line = r.line AND c.kind = 'tool_call' AND c.call_id = r.call_id AND c.idx < r.idx
WHERE r.kind = 'tool_result' AND NOT r.slow;
