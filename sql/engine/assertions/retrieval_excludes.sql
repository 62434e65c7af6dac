-- retrieval_excludes: no returned item's content contains the string (case-insensitive,
-- DuckDB lower(), literal). Not exercised without a retrieval step. A failure is located at
-- the first retrieval step that returned such an item.
WITH units AS (
    SELECT p.unit_id, lower(p.needle) AS lneedle, p.needle, s.episode_id
    FROM p_retrieval p JOIN chk_sel s ON s.case_id = p.case_id
    WHERE p.type = 'retrieval_excludes'
),
found AS (
    SELECT u.unit_id, u.episode_id,
           arg_min('retrieval step ' || t.step_idx || ' returned id ' || t.id_label
                   || ', whose content contains ' || to_json(u.needle)::VARCHAR,
                   (t.step_idx, t.rank)) AS reason,
           min(t.step_idx) AS step_idx
    FROM units u
    JOIN chk_returned t ON t.episode_id = u.episode_id AND contains(lower(t.content), u.lneedle)
    GROUP BY ALL
),
has_steps AS (SELECT DISTINCT episode_id FROM chk_retrieval_steps)
SELECT u.unit_id, u.episode_id, f.reason IS NULL AS passed,
       CASE WHEN f.reason IS NULL AND h.episode_id IS NULL THEN 'no' ELSE 'yes' END AS exercised,
       coalesce(f.reason, CASE WHEN h.episode_id IS NULL THEN 'no retrieval step' END) AS reason,
       f.step_idx
FROM units u
LEFT JOIN found f ON f.unit_id = u.unit_id AND f.episode_id = u.episode_id
LEFT JOIN has_steps h ON h.episode_id = u.episode_id
