-- What happens to each valid staged episode: add, skip (identical content already seen),
-- conflict (same episode_id, different content), or replace (with --replace).
-- $replace: BOOLEAN; $ingested_at: this file's ingest timestamp (rows of this same file
-- are never "replaced": within one file the first occurrence stays).
CREATE OR REPLACE TEMP TABLE stage_decide AS
WITH v AS (
    SELECT line, tl_str(episode_id) AS eid, hash,
           row_number() OVER w AS rn,
           first_value(hash) OVER w AS first_hash,
           first_value(line) OVER w AS first_line
    FROM stage
    WHERE line NOT IN (SELECT line FROM stage_bad)
    WINDOW w AS (PARTITION BY tl_str(episode_id) ORDER BY line)
)
SELECT v.line, v.eid, v.hash, v.first_line,
       CASE
           WHEN v.rn > 1 AND v.hash = v.first_hash THEN 'skip'
           WHEN v.rn > 1 THEN 'conflict_file'
           WHEN e.content_hash IS NULL THEN 'add'
           WHEN e.content_hash = v.hash THEN 'skip'
           WHEN $replace AND e.ingested_at <> $ingested_at THEN 'replace'
           WHEN e.ingested_at = $ingested_at THEN 'conflict_file'
           ELSE 'conflict'
       END AS action
FROM v
LEFT JOIN episodes e ON e.episode_id = v.eid;

CREATE OR REPLACE TEMP TABLE stage_keep AS
SELECT line, eid FROM stage_decide WHERE action IN ('add', 'replace');
