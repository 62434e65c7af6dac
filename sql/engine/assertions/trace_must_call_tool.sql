-- Counts of matching calls against [min_calls, max_calls]. Serves trace_must_call_tool,
-- trace_must_not_call_tool (0..0) and the sequence rules `require` (1..) and `max_calls`
-- (0..max). With by_availability (must_not_call, max_calls), a pass is `no` when the tool is
-- known unavailable and `unknown` when its availability is unknown (by name, ignoring
-- args_match and status); otherwise always `yes`. A matcher's names are those of its branches
-- (docs/suites.md §8): it is available when one of them is (called, or declared), unavailable when
-- tools are declared and none of them is.
-- Too many calls: located at the step of the first call beyond max_calls (for must_not_call, the
-- first call); too few: NULL, an absence is about the run as a whole.
WITH counts AS (
    -- of the counted matchers only (chk_hits holds every matcher's)
    SELECT matcher_id, episode_id, count(*) AS n
    FROM chk_hits
    WHERE matcher_id IN (SELECT matcher_id FROM p_call_counts)
    GROUP BY ALL
),
offered AS (
    SELECT b.matcher_id, t.episode_id, sum(t.n_calls) AS n_calls, bool_or(t.defined) AS defined
    FROM p_call_counts p
    JOIN p_matcher_branches b ON b.matcher_id = p.matcher_id
    JOIN chk_branch_names n ON n.branch_id = b.branch_id
    JOIN chk_tools t ON t.name = n.name
    WHERE p.by_availability
    GROUP BY ALL
),
r AS (
    SELECT p.unit_id, p.matcher_id, p.max_calls, s.episode_id, p.by_availability, p.expectation, m.label, m.tool,
           m.unavailable,
           coalesce(c.n, 0) AS n,
           coalesce(c.n, 0) >= p.min_calls
               AND (p.max_calls IS NULL OR coalesce(c.n, 0) <= p.max_calls) AS passed,
           tool_availability_of(t.n_calls > 0, t.defined, s.tools_declared) AS availability
    FROM p_call_counts p
    JOIN p_matchers m ON m.matcher_id = p.matcher_id
    JOIN chk_sel s ON s.case_id = p.case_id
    LEFT JOIN counts c ON c.matcher_id = p.matcher_id AND c.episode_id = s.episode_id
    LEFT JOIN offered t ON t.matcher_id = p.matcher_id AND t.episode_id = s.episode_id
),
-- the first call beyond max_calls, looked for in the runs with too many calls only
beyond AS (
    SELECT r.unit_id, r.episode_id, h.call_step_idx AS step_idx
    FROM r JOIN chk_hits h ON h.matcher_id = r.matcher_id AND h.episode_id = r.episode_id
    WHERE r.n > r.max_calls
    QUALIFY row_number() OVER (PARTITION BY r.unit_id, r.episode_id ORDER BY h.call_index)
            = r.max_calls + 1
)
SELECT r.unit_id, r.episode_id, passed,
       CASE WHEN NOT passed OR NOT by_availability OR availability = 'available' THEN 'yes'
            WHEN availability = 'unavailable' THEN 'no'
            ELSE 'unknown' END AS exercised,
       CASE WHEN NOT passed THEN
                n || ' matching call' || CASE WHEN n = 1 THEN '' ELSE 's' END || ' of ' || label
                || ', expected ' || expectation
            WHEN NOT by_availability OR availability = 'available' THEN NULL
            WHEN availability = 'unavailable' THEN
                coalesce(unavailable, to_json(tool)::VARCHAR || ' was not offered')
            ELSE 'the tools offered were not recorded' END AS reason,
       b.step_idx
FROM r
LEFT JOIN beyond b ON b.unit_id = r.unit_id AND b.episode_id = r.episode_id
