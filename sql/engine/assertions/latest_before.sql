-- The rule latest_before of sequence_valid (docs/suites.md §4, §9), one row per rule and run; rows
-- are combined into one result per entry by _verdicts.sql. For every call matching m_then, the
-- latest earlier call matching m_latest (the whole matcher: its own `status` filter included)
-- must have a status in `statuses`; a m_then call with no earlier m_latest call is skipped, or
-- fails when `required`. A call whose result never came has status `missing`.
-- Exercised: `no` when no call matches m_then, or when no m_then call had an earlier m_latest
-- call and `required` is false. A failure is located at the first m_then call that breaks it.
WITH base AS (
    SELECT p.unit_id, p.m_then, p.m_latest, p.statuses, p.required, s.episode_id,
           mt.label AS then_label, ml.label AS latest_label
    FROM p_latest_before p
    JOIN chk_sel s ON s.case_id = p.case_id
    JOIN p_matchers mt ON mt.matcher_id = p.m_then
    JOIN p_matchers ml ON ml.matcher_id = p.m_latest
),
-- each m_then call with the latest m_latest call before it (an ASOF join: a sort and one pass per
-- run, not a comparison of every pair of calls) and that call's status
judged AS (
    SELECT b.unit_id, b.episode_id, t.call_index, t.call_step_idx,
           l.call_index AS latest_call, c.status AS latest_status,
           CASE WHEN l.call_index IS NULL THEN NOT b.required
                ELSE coalesce(list_contains(b.statuses, c.status), false) END AS ok
    FROM base b
    JOIN chk_hits t ON t.matcher_id = b.m_then AND t.episode_id = b.episode_id
    ASOF LEFT JOIN (SELECT * FROM chk_hits
                    WHERE matcher_id IN (SELECT m_latest FROM p_latest_before)) l
      ON l.matcher_id = b.m_latest AND l.episode_id = b.episode_id AND t.call_index > l.call_index
    LEFT JOIN chk_calls c ON c.episode_id = l.episode_id AND c.call_index = l.call_index
),
per_run AS (
    SELECT unit_id, episode_id, count(latest_call) AS n_with_latest,
           min(call_index) FILTER (WHERE NOT ok) AS bad_call,
           arg_min(call_step_idx, call_index) FILTER (WHERE NOT ok) AS bad_step,
           arg_min(latest_call, call_index) FILTER (WHERE NOT ok) AS bad_latest,
           arg_min(latest_status, call_index) FILTER (WHERE NOT ok) AS bad_status
    FROM judged
    GROUP BY ALL
)
SELECT b.unit_id, b.episode_id, r.bad_call IS NULL AS passed,
       CASE WHEN r.bad_call IS NULL AND (r.episode_id IS NULL
                                         OR (r.n_with_latest = 0 AND NOT b.required))
            THEN 'no' ELSE 'yes' END AS exercised,
       CASE
           WHEN r.episode_id IS NULL THEN 'no call matches ' || b.then_label
           WHEN r.bad_call IS NULL AND r.n_with_latest = 0 AND NOT b.required THEN
               'no ' || b.then_label || ' call has an earlier ' || b.latest_label || ' call'
           WHEN r.bad_call IS NULL THEN NULL
           WHEN r.bad_latest IS NULL THEN
               b.then_label || ' at call_index ' || r.bad_call || ' has no earlier '
               || b.latest_label || ' call'
           ELSE
               b.then_label || ' at call_index ' || r.bad_call || ': the latest earlier '
               || b.latest_label || ' call (call_index ' || r.bad_latest || ') has status '
               || coalesce(r.bad_status, 'unknown') || ', not ' || array_to_string(b.statuses, ' or ')
       END AS reason,
       r.bad_step AS step_idx
FROM base b
LEFT JOIN per_run r ON r.unit_id = b.unit_id AND r.episode_id = b.episode_id
