-- Call/result pairing, set-based for the common case (docs/trace-format.md §2, docs/duckdb-notes.md §5):
-- an episode whose calls and results each carry distinct non-empty call ids, every result
-- matching an earlier call, pairs by call id. One aggregation per (episode, call id) tells both:
-- the episode is clear when each of its ids has at most one call and one result, the result
-- after the call. The calls and results of the other episodes go to stage_cr, in step order,
-- and are paired by the sequential rule in Python (pairing.py), which adds to stage_pairs.
CREATE OR REPLACE TEMP TABLE stage_ids AS
SELECT line, call_id,
       count(*) FILTER (WHERE kind = 'tool_call') AS calls,
       count(*) FILTER (WHERE kind = 'tool_result') AS results,
       min(idx) FILTER (WHERE kind = 'tool_call') AS call_idx,
       min(idx) FILTER (WHERE kind = 'tool_result') AS result_idx
FROM stage_steps
WHERE kind IN ('tool_call', 'tool_result') AND line IN (SELECT line FROM stage_keep)
GROUP BY line, call_id;

CREATE OR REPLACE TEMP TABLE stage_slow AS
SELECT DISTINCT line FROM stage_ids
WHERE coalesce(call_id, '') = '' OR calls > 1 OR results > 1
   OR (results = 1 AND (calls = 0 OR call_idx > result_idx));

CREATE OR REPLACE TEMP TABLE stage_pairs AS
SELECT line, call_idx, result_idx FROM stage_ids
WHERE calls = 1 AND results = 1 AND line NOT IN (SELECT line FROM stage_slow);

CREATE OR REPLACE TEMP TABLE stage_cr AS
SELECT line, idx, kind, name, call_id
FROM stage_steps
WHERE kind IN ('tool_call', 'tool_result') AND line IN (SELECT line FROM stage_slow)
ORDER BY line, idx;
