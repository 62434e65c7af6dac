-- Sequences of tool matchers over the calls in call_index order. Serves trace_tool_sequence
-- (mode `subsequence`: allow_other_tools true, an in-order subsequence; mode `exact`:
-- allow_other_tools false, the calls match the items one to one) and the sequence rule
-- `sequence` (mode `rule`: a subsequence; `rule_strict`: consecutive calls), which holds
-- trivially, exercised `no`, when no call matches any of its tools.
-- The subsequence test is greedy (earliest next match), which is exact for subsequences.
-- A failure of mode `exact` is located at the step of the first call that disagrees with the
-- items (NULL when the run has too few calls); the other modes fail on an absence: NULL.
WITH RECURSIVE
-- materialized: the recursive walk below would otherwise rebuild every list at each step
hit_lists AS MATERIALIZED (
    SELECT matcher_id, episode_id, list(call_index ORDER BY call_index) AS calls
    FROM chk_hits
    WHERE matcher_id IN (SELECT matcher_id FROM p_sequence_items)
    GROUP BY ALL
),
runs AS (
    SELECT q.unit_id, q.mode, q.n_items, s.episode_id
    FROM p_sequences q JOIN chk_sel s ON s.case_id = q.case_id
),
-- matched = how many items matched in order so far; last_call = call_index of the last match
walk(unit_id, episode_id, matched, last_call) AS (
    SELECT unit_id, episode_id, 0, -1 FROM runs WHERE mode IN ('subsequence', 'rule')
    UNION ALL
    SELECT unit_id, episode_id, matched, last_call
    FROM (
        SELECT w.unit_id, w.episode_id, w.matched + 1 AS matched,
               list_filter(h.calls, lambda c: c > w.last_call)[1] AS last_call
        FROM walk w
        JOIN p_sequence_items i ON i.unit_id = w.unit_id AND i.pos = w.matched
        JOIN hit_lists h ON h.matcher_id = i.matcher_id AND h.episode_id = w.episode_id
    )
    WHERE last_call IS NOT NULL
),
walked AS (
    SELECT unit_id, episode_id, max(matched) AS matched, arg_max(last_call, matched) AS last_call
    FROM walk GROUP BY ALL
),
consecutive AS (
    SELECT DISTINCT unit_id, episode_id
    FROM (
        SELECT i.unit_id, h.episode_id, h.call_index - i.pos AS start, count(*) AS n
        FROM p_sequence_items i JOIN chk_hits h ON h.matcher_id = i.matcher_id
        GROUP BY ALL
    ) x JOIN p_sequences q USING (unit_id)
    WHERE x.n = q.n_items
),
touched AS (
    SELECT DISTINCT i.unit_id, h.episode_id
    FROM p_sequence_items i JOIN chk_hits h ON h.matcher_id = i.matcher_id
),
-- exact mode: the first position where the calls and the items disagree
mismatch AS (
    SELECT x.unit_id, x.episode_id, min(x.pos) AS pos
    FROM (
        SELECT r.unit_id, r.episode_id, unnest(range(greatest(r.n_items, coalesce(n.n, 0)))) AS pos
        FROM runs r
        LEFT JOIN (SELECT episode_id, count(*) AS n FROM chk_calls
                   WHERE episode_id IN (SELECT episode_id FROM runs WHERE mode = 'exact')
                   GROUP BY ALL) n
               ON n.episode_id = r.episode_id
        WHERE r.mode = 'exact'
    ) x
    LEFT JOIN p_sequence_items i USING (unit_id, pos)
    LEFT JOIN chk_hits h ON h.matcher_id = i.matcher_id AND h.episode_id = x.episode_id
                        AND h.call_index = x.pos
    WHERE h.call_index IS NULL
    GROUP BY x.unit_id, x.episode_id
),
r AS (
    SELECT r.unit_id, r.episode_id, r.mode, r.n_items,
           coalesce(w.matched, 0) AS matched, w.last_call, mm.pos AS mismatch_at,
           t.unit_id IS NOT NULL AS touched,
           CASE r.mode
               WHEN 'subsequence' THEN coalesce(w.matched, 0) = r.n_items
               WHEN 'rule' THEN t.unit_id IS NULL OR coalesce(w.matched, 0) = r.n_items
               WHEN 'rule_strict' THEN t.unit_id IS NULL OR c.unit_id IS NOT NULL
               WHEN 'exact' THEN mm.pos IS NULL
           END AS passed
    FROM runs r
    LEFT JOIN walked w ON w.unit_id = r.unit_id AND w.episode_id = r.episode_id
    LEFT JOIN consecutive c ON c.unit_id = r.unit_id AND c.episode_id = r.episode_id
    LEFT JOIN touched t ON t.unit_id = r.unit_id AND t.episode_id = r.episode_id
    LEFT JOIN mismatch mm ON mm.unit_id = r.unit_id AND mm.episode_id = r.episode_id
),
described AS (
    SELECT r.*, m.label AS item_label, c.tool_name AS call_name,
           c.call_index IS NOT NULL AS call_exists, c.call_step_idx
    FROM r
    LEFT JOIN p_sequence_items i
           ON i.unit_id = r.unit_id
          AND i.pos = CASE WHEN r.mode = 'exact' THEN r.mismatch_at ELSE r.matched END
    LEFT JOIN p_matchers m ON m.matcher_id = i.matcher_id
    LEFT JOIN chk_calls c ON r.mode = 'exact' AND c.episode_id = r.episode_id
                         AND c.call_index = r.mismatch_at
)
SELECT unit_id, episode_id, passed,
       CASE WHEN passed AND mode IN ('rule', 'rule_strict') AND NOT touched THEN 'no'
            ELSE 'yes' END AS exercised,
       CASE
           WHEN passed AND mode IN ('rule', 'rule_strict') AND NOT touched THEN
               'no call matches any of its tools'
           WHEN passed THEN NULL
           WHEN mode = 'rule_strict' THEN
               'its tools never occur as consecutive calls in the listed order'
           WHEN mode = 'exact' AND item_label IS NULL THEN
               'unexpected call ' || coalesce(to_json(call_name)::VARCHAR, 'without a name')
               || ' at call_index ' || mismatch_at || ' (expected ' || n_items || ' calls)'
           WHEN mode = 'exact' AND NOT call_exists THEN
               'no call at call_index ' || mismatch_at || ', expected ' || item_label
           WHEN mode = 'exact' THEN
               'call_index ' || mismatch_at || ' is '
               || coalesce(to_json(call_name)::VARCHAR, 'a call without a name')
               || ', expected ' || item_label
           WHEN matched = 0 THEN 'no call matches ' || item_label
           ELSE 'no call matches ' || item_label || ' after call_index ' || last_call
                || ' (matched ' || matched || ' of ' || n_items || ' in order)'
       END AS reason,
       CASE WHEN NOT passed AND mode = 'exact' THEN call_step_idx END AS step_idx
FROM described
