-- What happens to each staged episode (docs/trace-format.md §2, §5): 'bad' (it breaks a rule: `reason`),
-- 'add', 'skip' (identical content already stored), 'conflict' (an episode of that id is stored
-- with different content), 'conflict_file' (likewise, stored earlier from the same file:
-- `first_line`), or 'replace' (with $replace: BOOLEAN). Only stored episodes count as seen:
-- those committed, and those of the open transaction (txn_seen). Several files may share a
-- batch: `line` orders the batch's records (files in input order, each in line order).
-- `other_file` (of a 'skip'): the identical episode came from another file (an earlier one of
-- this ingest, or the stored episode's `source_uri` is not this file's): a session read whole
-- from each of its files (Claude Code) is merged into the first, not "already ingested".
CREATE OR REPLACE TEMP TABLE stage_decide AS
WITH checked AS (
    SELECT s.line, s.file_no, s.src_line, s.source_uri, s.eid, s.hash,
           coalesce(s.reason, t.reason, st.reason) AS reason
    FROM stage s
    LEFT JOIN (SELECT line, arg_min(reason, position) AS reason FROM stage_tools
               WHERE reason IS NOT NULL GROUP BY line) t USING (line)
    LEFT JOIN (SELECT line, arg_min(reason, idx) AS reason FROM stage_steps
               WHERE reason IS NOT NULL GROUP BY line) st USING (line)
), valid AS (
    SELECT c.line, c.file_no, c.src_line, c.eid, c.hash, f.hash AS seen_hash, f.file_no AS seen_file,
           f.line AS seen_line, e.content_hash AS stored_hash, c.source_uri, e.source_uri AS stored_uri
    FROM checked c
    LEFT JOIN txn_seen f USING (eid)
    LEFT JOIN episodes e ON e.episode_id = c.eid
    WHERE c.reason IS NULL
), stores AS (
    -- per id, the first occurrence that gets stored: the first one when nothing is stored
    -- under that id yet; with $replace, the first one whose content differs from what is
    SELECT eid, min(line) AS line, arg_min(hash, line) AS hash, arg_min(file_no, line) AS file_no,
           arg_min(src_line, line) AS src_line
    FROM valid
    WHERE seen_hash IS NULL AND (stored_hash IS NULL OR ($replace AND hash <> stored_hash))
    GROUP BY eid
)
SELECT v.line, v.file_no, v.src_line, v.eid, v.hash, NULL AS reason,
       CASE WHEN v.line > s.line THEN s.src_line ELSE v.seen_line END AS first_line,
       CASE
           WHEN v.line = s.line AND v.stored_hash IS NULL THEN 'add'
           WHEN v.line = s.line THEN 'replace'
           WHEN v.line > s.line AND v.hash = s.hash THEN 'skip'
           WHEN v.line > s.line AND v.file_no = s.file_no THEN 'conflict_file'
           WHEN v.line > s.line THEN 'conflict'
           WHEN v.hash = coalesce(v.seen_hash, v.stored_hash) THEN 'skip'
           WHEN v.seen_hash IS NOT NULL AND v.seen_file = v.file_no THEN 'conflict_file'
           ELSE 'conflict'
       END AS action,
       CASE WHEN v.line > s.line THEN v.file_no <> s.file_no
            WHEN v.seen_hash IS NOT NULL THEN v.seen_file <> v.file_no
            ELSE v.stored_uri IS DISTINCT FROM v.source_uri END AS other_file
FROM valid v
LEFT JOIN stores s USING (eid)
UNION ALL
SELECT line, file_no, src_line, eid, hash, reason, NULL, 'bad', NULL FROM checked WHERE reason IS NOT NULL;

CREATE OR REPLACE TEMP TABLE stage_keep AS
SELECT line, file_no, eid FROM stage_decide WHERE action IN ('add', 'replace');

INSERT INTO txn_seen SELECT eid, hash, file_no, src_line FROM stage_decide WHERE action IN ('add', 'replace');
