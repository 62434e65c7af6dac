-- retrieval_excludes_superseded: no returned item has a non-null superseded_by, and no
-- superseded chain among a step's candidates is a cycle. Chains are followed with the visited
-- path (docs/duckdb-notes.md §15); a chain ends where superseded_by leaves the candidate set. Not
-- exercised without a retrieval step. A failure is located at the step its reason names.
WITH RECURSIVE
edges AS (
    SELECT DISTINCT episode_id, step_idx, id_key, id_label,
           chk_json_key(superseded_by) AS next_key
    FROM chk_candidates
    WHERE superseded_by IS NOT NULL AND json_type(superseded_by) <> 'NULL' AND id_key IS NOT NULL
),
chain(episode_id, step_idx, start_label, key, path, cycle) AS (
    SELECT episode_id, step_idx, id_label, next_key, [id_key], next_key = id_key FROM edges
    UNION ALL
    SELECT c.episode_id, c.step_idx, c.start_label, e.next_key, list_append(c.path, c.key),
           list_contains(list_append(c.path, c.key), e.next_key)
    FROM chain c
    JOIN edges e ON e.episode_id = c.episode_id AND e.step_idx = c.step_idx AND e.id_key = c.key
    WHERE NOT c.cycle
),
problems AS (
    SELECT episode_id, step_idx,
           'retrieval step ' || step_idx || ' returned superseded id ' || id_label
           || ' (superseded_by ' || superseded_by || ')' AS reason, 0 AS kind, rank AS ord
    FROM chk_returned WHERE superseded
    UNION ALL
    SELECT episode_id, step_idx,
           'retrieval step ' || step_idx || ': superseded_by chains form a cycle through id '
           || start_label, 1, 0
    FROM chain WHERE cycle
),
bad AS (
    SELECT episode_id, arg_min(reason, (step_idx, kind, ord, reason)) AS reason,
           min(step_idx) AS step_idx
    FROM problems GROUP BY episode_id
),
has_steps AS (SELECT DISTINCT episode_id FROM chk_retrieval_steps)
SELECT p.unit_id, s.episode_id, b.reason IS NULL AS passed,
       CASE WHEN b.reason IS NULL AND h.episode_id IS NULL THEN 'no' ELSE 'yes' END AS exercised,
       coalesce(b.reason, CASE WHEN h.episode_id IS NULL THEN 'no retrieval step' END) AS reason,
       b.step_idx
FROM p_retrieval p
JOIN chk_sel s ON s.case_id = p.case_id
LEFT JOIN bad b ON b.episode_id = s.episode_id
LEFT JOIN has_steps h ON h.episode_id = s.episode_id
WHERE p.type = 'retrieval_excludes_superseded'
