-- What happens to each staged episode (docs/trace-format.md §2, §5): 'bad' (it breaks a rule: `reason`),
-- 'add', 'skip' (identical content already stored), 'conflict' (an episode of that id is stored
-- with different content), 'conflict_file' (likewise, stored earlier from this file:
-- `first_line`), or 'replace' (with $replace: BOOLEAN). Only stored episodes count as seen.
CREATE OR REPLACE TEMP TABLE stage_decide AS
WITH checked AS (
    SELECT s.line, s.eid, s.hash, coalesce(s.reason, t.reason, st.reason) AS reason
    FROM stage s
    LEFT JOIN (SELECT line, arg_min(reason, position) AS reason FROM stage_tools
               WHERE reason IS NOT NULL GROUP BY line) t USING (line)
    LEFT JOIN (SELECT line, arg_min(reason, idx) AS reason FROM stage_steps
               WHERE reason IS NOT NULL GROUP BY line) st USING (line)
), valid AS (
    SELECT c.line, c.eid, c.hash, f.hash AS file_hash, f.line AS file_line, e.content_hash AS stored_hash
    FROM checked c
    LEFT JOIN file_seen f USING (eid)
    LEFT JOIN episodes e ON e.episode_id = c.eid
    WHERE c.reason IS NULL
), stores AS (
    -- per id, the first occurrence that gets stored: the first one when nothing is stored
    -- under that id yet; with $replace, the first one whose content differs from what is
    SELECT eid, min(line) AS line, arg_min(hash, line) AS hash
    FROM valid
    WHERE file_hash IS NULL AND (stored_hash IS NULL OR ($replace AND hash <> stored_hash))
    GROUP BY eid
)
SELECT v.line, v.eid, v.hash, NULL AS reason,
       CASE WHEN v.line > s.line THEN s.line ELSE v.file_line END AS first_line,
       CASE
           WHEN v.line = s.line AND v.stored_hash IS NULL THEN 'add'
           WHEN v.line = s.line THEN 'replace'
           WHEN v.line > s.line AND v.hash = s.hash THEN 'skip'
           WHEN v.line > s.line THEN 'conflict_file'
           WHEN v.hash = coalesce(v.file_hash, v.stored_hash) THEN 'skip'
           WHEN v.file_hash IS NOT NULL THEN 'conflict_file'
           ELSE 'conflict'
       END AS action
FROM valid v
LEFT JOIN stores s USING (eid)
UNION ALL
SELECT line, eid, hash, reason, NULL, 'bad' FROM checked WHERE reason IS NOT NULL;

CREATE OR REPLACE TEMP TABLE stage_keep AS
SELECT line, eid FROM stage_decide WHERE action IN ('add', 'replace');

INSERT INTO file_seen SELECT eid, hash, line FROM stage_decide WHERE action IN ('add', 'replace');
