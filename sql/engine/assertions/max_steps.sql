-- expect.max_steps: the largest numeric `steps_used` of the run's `budget` steps is at most n.
-- Not exercised when no budget step has a numeric steps_used. A failure is located at the
-- first budget step whose steps_used is over n.
WITH budget AS MATERIALIZED (
    -- each document parsed once: the value is extracted here, then typed and cast on its own
    -- (inlined into the type test, the extraction would run once per listed type)
    SELECT episode_id, idx, json_extract(data, '$.steps_used') AS used
    FROM chk_steps_in
    WHERE kind = 'budget'
      -- the runs of the cases that ask: the other runs' budget steps are never read
      AND episode_id IN (SELECT s.episode_id FROM chk_sel s JOIN p_max_steps p ON p.case_id = s.case_id)
),
used AS (
    SELECT episode_id, max(used::DOUBLE) AS most,
           arg_max(used::VARCHAR, used::DOUBLE) AS most_text,
           -- (steps_used, idx) of every numeric budget step, for the failure's location
           list((used::DOUBLE, idx)) AS points
    FROM budget
    WHERE json_type(used) IN ('BIGINT', 'UBIGINT', 'DOUBLE', 'HUGEINT')
    GROUP BY episode_id
),
r AS (
    SELECT p.unit_id, s.episode_id, p.max, u.most, u.most_text,
           u.most IS NULL OR u.most <= p.max AS passed,
           -- the first budget step over the limit
           CASE WHEN u.most > p.max THEN
               list_min([x[2] FOR x IN u.points IF x[1] > p.max]) END AS step_idx
    FROM p_max_steps p
    JOIN chk_sel s ON s.case_id = p.case_id
    LEFT JOIN used u ON u.episode_id = s.episode_id
)
SELECT unit_id, episode_id, passed,
       CASE WHEN NOT passed THEN 'yes' WHEN most IS NULL THEN 'no' ELSE 'yes' END AS exercised,
       CASE WHEN NOT passed THEN 'used ' || most_text || ' steps, max ' || max
            WHEN most IS NULL THEN 'no budget step recorded steps_used' END AS reason,
       step_idx
FROM r
