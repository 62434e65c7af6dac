-- retrieval_top: in every retrieval step, every listed id (compared as JSON values) is among
-- the first k returned. Not exercised without a retrieval step. A failure is located at the
-- first retrieval step that misses an id.
WITH units AS (
    SELECT p.unit_id, p.k, s.episode_id
    FROM p_retrieval p JOIN chk_sel s ON s.case_id = p.case_id
    WHERE p.type = 'retrieval_top'
),
missing AS (
    SELECT u.unit_id, u.episode_id,
           arg_min('retrieval step ' || r.step_idx || ': id ' || i.id_label
                   || ' is not among the first ' || u.k || ' returned',
                   (r.step_idx, i.id_label)) AS reason,
           min(r.step_idx) AS step_idx
    FROM units u
    JOIN chk_retrieval_steps r ON r.episode_id = u.episode_id
    JOIN p_retrieval_ids i ON i.unit_id = u.unit_id
    WHERE NOT EXISTS (SELECT 1 FROM chk_returned t
                      WHERE t.episode_id = r.episode_id AND t.step_idx = r.step_idx
                        AND t.id_key = i.id_key AND t.rank < u.k)
    GROUP BY ALL
),
has_steps AS (SELECT DISTINCT episode_id FROM chk_retrieval_steps)
SELECT u.unit_id, u.episode_id, m.reason IS NULL AS passed,
       CASE WHEN m.reason IS NULL AND h.episode_id IS NULL THEN 'no' ELSE 'yes' END AS exercised,
       coalesce(m.reason, CASE WHEN h.episode_id IS NULL THEN 'no retrieval step' END) AS reason,
       m.step_idx
FROM units u
LEFT JOIN missing m ON m.unit_id = u.unit_id AND m.episode_id = u.episode_id
LEFT JOIN has_steps h ON h.episode_id = u.episode_id
