-- The order rules of sequence_valid (docs/suites.md §4), one row per rule and run; rows are combined
-- into one result per entry by _verdicts.sql. (`require` and `max_calls` are call counts in
-- trace_must_call_tool.sql, `sequence` is in trace_tool_sequence.sql, `blocklist` in
-- tool_blocklist.sql.) m1 is first / trigger / tool, m2 is then / forbidden. `within` counts
-- calls.
--   before:      some m1 call comes before the first m2 call; `no` without an m2 call
--   after:       every m1 call is followed by an m2 call at most `within` calls later;
--                `no` without an m1 call
--   never_after: no m2 call after the first m1 call; `no` without an m1 call
--   eventually:  some call among the first `within` matches m1
-- A failure is located at the offending call's step: before, the first m2 call; after, the
-- unanswered m1 call; never_after, the forbidden call. eventually: NULL (an absence).
WITH firsts AS (
    -- of the rules' matchers only (chk_hits holds every matcher's)
    SELECT matcher_id, episode_id, min(call_index) AS first_call,
           arg_min(call_step_idx, call_index) AS first_step
    FROM chk_hits
    WHERE matcher_id IN (SELECT m1 FROM p_order_rules UNION ALL SELECT m2 FROM p_order_rules)
    GROUP BY ALL
),
base AS (
    SELECT p.unit_id, p.rule, p.m1, p.m2, p.within, s.episode_id,
           f1.first_call AS first1, f2.first_call AS first2, f2.first_step AS first2_step,
           m1.label AS label1, m2.label AS label2
    FROM p_order_rules p
    JOIN chk_sel s ON s.case_id = p.case_id
    JOIN p_matchers m1 ON m1.matcher_id = p.m1
    LEFT JOIN p_matchers m2 ON m2.matcher_id = p.m2
    LEFT JOIN firsts f1 ON f1.matcher_id = p.m1 AND f1.episode_id = s.episode_id
    LEFT JOIN firsts f2 ON f2.matcher_id = p.m2 AND f2.episode_id = s.episode_id
),
-- after: each trigger call with the first m2 call after it (an ASOF join: a sort and one pass
-- per run, not a comparison of every pair of calls), then the first trigger call left without
-- an m2 call within `within` calls
answered AS (
    SELECT b.unit_id, b.episode_id, b.within, t.call_index, t.call_step_idx, h.call_index AS next_call
    FROM base b
    JOIN chk_hits t ON t.matcher_id = b.m1 AND t.episode_id = b.episode_id
    ASOF LEFT JOIN (SELECT * FROM chk_hits
                    WHERE matcher_id IN (SELECT m2 FROM p_order_rules WHERE rule = 'after')) h
      ON h.matcher_id = b.m2 AND h.episode_id = b.episode_id AND t.call_index < h.call_index
    WHERE b.rule = 'after'
),
unanswered AS (
    SELECT unit_id, episode_id, min(call_index) AS call_index,
           arg_min(call_step_idx, call_index) AS step_idx
    FROM answered
    WHERE next_call IS NULL OR next_call - call_index > within
    GROUP BY ALL
),
-- never_after: the first forbidden call after the first trigger call
forbidden AS (
    SELECT b.unit_id, b.episode_id, min(h.call_index) AS call_index,
           arg_min(h.call_step_idx, h.call_index) AS step_idx
    FROM base b
    JOIN chk_hits h ON h.matcher_id = b.m2 AND h.episode_id = b.episode_id
    WHERE b.rule = 'never_after' AND h.call_index > b.first1
    GROUP BY ALL
),
r AS (
    SELECT b.*, a.call_index AS unanswered_at, f.call_index AS forbidden_at,
           a.step_idx AS unanswered_step, f.step_idx AS forbidden_step,
           CASE b.rule
               WHEN 'before' THEN b.first2 IS NULL OR coalesce(b.first1 < b.first2, false)
               WHEN 'after' THEN a.call_index IS NULL
               WHEN 'never_after' THEN f.call_index IS NULL
               WHEN 'eventually' THEN coalesce(b.first1 < b.within, false)
           END AS passed,
           CASE b.rule
               WHEN 'before' THEN b.first2 IS NULL
               WHEN 'after' THEN b.first1 IS NULL
               WHEN 'never_after' THEN b.first1 IS NULL
               ELSE false
           END AS vacuous
    FROM base b
    LEFT JOIN unanswered a ON a.unit_id = b.unit_id AND a.episode_id = b.episode_id
    LEFT JOIN forbidden f ON f.unit_id = b.unit_id AND f.episode_id = b.episode_id
)
SELECT unit_id, episode_id, passed,
       CASE WHEN passed AND vacuous THEN 'no' ELSE 'yes' END AS exercised,
       CASE
           WHEN passed AND vacuous AND rule = 'before' THEN 'no call matches ' || label2
           WHEN passed AND vacuous THEN 'no call matches ' || label1
           WHEN passed THEN NULL
           WHEN rule = 'before' THEN
               'no ' || label1 || ' call before the first ' || label2
               || ' call (call_index ' || first2 || ')'
           WHEN rule = 'after' THEN
               label1 || ' at call_index ' || unanswered_at || ' is not followed by ' || label2
               || ' within ' || within || ' call' || CASE WHEN within = 1 THEN '' ELSE 's' END
           WHEN rule = 'never_after' THEN
               label2 || ' at call_index ' || forbidden_at || ' comes after ' || label1
               || ' at call_index ' || first1
           WHEN rule = 'eventually' THEN
               'no call among the first ' || within || ' matches ' || label1
       END AS reason,
       CASE WHEN NOT passed THEN CASE rule WHEN 'before' THEN first2_step
                                           WHEN 'after' THEN unanswered_step
                                           WHEN 'never_after' THEN forbidden_step END
       END AS step_idx
FROM r
