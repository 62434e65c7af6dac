-- trace_max_steps: the run has at most `max` steps (of `kinds`, when given).
-- Not exercised when the run has no step (of those kinds). A failure is located at the first
-- step beyond the limit: the (max + 1)-th step (of those kinds) in idx order.
WITH counted AS MATERIALIZED (
    -- each step (of those kinds) of its units' runs, read once (the selected runs' steps: chk_steps_in),
    -- counted, then searched for the step beyond the limit
    SELECT p.unit_id, s.episode_id, st.idx
    FROM p_trace_max_steps p
    JOIN chk_sel s ON s.case_id = p.case_id
    JOIN chk_steps_in st ON st.episode_id = s.episode_id
    WHERE p.kinds IS NULL OR list_contains(p.kinds, st.kind)
),
n AS (
    SELECT unit_id, episode_id, count(*) AS n FROM counted GROUP BY ALL
),
r AS (
    SELECT p.unit_id, s.episode_id, p.max, p.kinds, coalesce(n.n, 0) AS n
    FROM p_trace_max_steps p
    JOIN chk_sel s ON s.case_id = p.case_id
    LEFT JOIN n ON n.unit_id = p.unit_id AND n.episode_id = s.episode_id
),
-- looked for in the runs over the limit only
beyond AS (
    SELECT r.unit_id, r.episode_id, c.idx AS step_idx
    FROM r JOIN counted c ON c.unit_id = r.unit_id AND c.episode_id = r.episode_id
    WHERE r.n > r.max
    QUALIFY row_number() OVER (PARTITION BY r.unit_id, r.episode_id ORDER BY c.idx) = r.max + 1
)
SELECT r.unit_id, r.episode_id, n <= max AS passed,
       CASE WHEN n = 0 THEN 'no' ELSE 'yes' END AS exercised,
       CASE WHEN n > max OR n = 0 THEN
           n || ' step' || CASE WHEN n = 1 THEN '' ELSE 's' END
           || coalesce(' of kind ' || array_to_string(kinds, '|'), '')
           || CASE WHEN n > max THEN ', max ' || max ELSE '' END
       END AS reason,
       b.step_idx
FROM r
LEFT JOIN beyond b ON b.unit_id = r.unit_id AND b.episode_id = r.episode_id
