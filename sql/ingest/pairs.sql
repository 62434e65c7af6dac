-- Call/result pairing, set-based for the common case (trace-format §2, duckdb-notes §5):
-- an episode whose calls and results each carry distinct non-empty call ids, every result
-- matching an earlier call, pairs by a plain join. The others are listed in
-- stage_pair_slow and paired by the sequential rule in Python.
CREATE OR REPLACE TEMP TABLE stage_cr AS
SELECT st.line, st.idx, tl_str(st.kind) AS kind, tl_str(st.name) AS name, tl_str(st.call_id) AS call_id
FROM stage_steps st JOIN stage_keep USING (line)
WHERE tl_str(st.kind) IN ('tool_call', 'tool_result');

CREATE OR REPLACE TEMP TABLE stage_pair_slow AS
WITH unclear AS (
    SELECT line, kind FROM stage_cr
    GROUP BY line, kind
    HAVING count(*) FILTER (WHERE coalesce(call_id, '') = '') > 0
        OR count(DISTINCT call_id) < count(*)
), joined AS (
    SELECT r.line, r.idx AS result_idx, c.idx AS call_idx
    FROM stage_cr r
    LEFT JOIN stage_cr c ON c.line = r.line AND c.kind = 'tool_call' AND c.call_id = r.call_id
                        AND c.idx < r.idx
    WHERE r.kind = 'tool_result'
)
SELECT line FROM unclear
UNION SELECT line FROM joined WHERE call_idx IS NULL;

CREATE OR REPLACE TEMP TABLE stage_pairs AS
SELECT r.line, c.idx AS call_idx, r.idx AS result_idx
FROM stage_cr r
JOIN stage_cr c ON c.line = r.line AND c.kind = 'tool_call' AND c.call_id = r.call_id AND c.idx < r.idx
WHERE r.kind = 'tool_result' AND r.line NOT IN (SELECT line FROM stage_pair_slow);
