-- The retrieval steps of the selected runs, their candidates and returned items
-- (docs/trace-format.md §2, §5). Absent `candidates`/`returned` are []; ids compare as JSON values
-- via chk_json_key (tracelab.suite.compile.json_key builds the same keys for suite ids);
-- a returned id takes content and superseded_by from its first candidate, and has neither
-- when no candidate has that id; any non-null superseded_by marks an item superseded.
CREATE OR REPLACE TEMP MACRO chk_json_key(j) AS
    CASE WHEN json_type(j) = 'VARCHAR' THEN 's:' || json_extract_string(j, '$')
         ELSE 'j:' || j::VARCHAR END;

CREATE OR REPLACE TEMP MACRO chk_json_text(j) AS
    CASE json_type(j) WHEN 'VARCHAR' THEN json_extract_string(j, '$')
                      WHEN 'NULL' THEN NULL
                      ELSE j::VARCHAR END;

CREATE OR REPLACE TEMP TABLE chk_retrieval_steps AS
SELECT episode_id, idx AS step_idx, data
FROM chk_steps_in
WHERE kind = 'retrieval';

CREATE OR REPLACE TEMP TABLE chk_candidates AS
WITH items AS (
    SELECT episode_id, step_idx,
           unnest(range(len(l))) AS pos, unnest(l) AS item
    FROM (SELECT episode_id, step_idx,
                 coalesce(json_extract(data, '$.candidates[*]'), []) AS l
          FROM chk_retrieval_steps)
),
fields AS (
    -- each item parsed once for its three values
    SELECT episode_id, step_idx, pos,
           json_extract(item, ['$.id', '$.content', '$.superseded_by']) AS v
    FROM items
)
SELECT episode_id, step_idx, pos,
       chk_json_key(v[1]) AS id_key,
       v[1]::VARCHAR AS id_label,
       chk_json_text(v[2]) AS content,
       v[3] AS superseded_by
FROM fields;

CREATE OR REPLACE TEMP TABLE chk_returned AS
WITH items AS (
    SELECT episode_id, step_idx,
           unnest(range(len(l))) AS rank, unnest(l) AS id
    FROM (SELECT episode_id, step_idx,
                 coalesce(json_extract(data, '$.returned[*]'), []) AS l
          FROM chk_retrieval_steps)
),
first_candidate AS (
    SELECT episode_id, step_idx, id_key,
           arg_min_null(content, pos) AS content,
           arg_min_null(superseded_by, pos) AS superseded_by
    FROM chk_candidates
    GROUP BY ALL
)
SELECT i.episode_id, i.step_idx, i.rank, chk_json_key(i.id) AS id_key, i.id::VARCHAR AS id_label,
       f.content,
       json_type(f.superseded_by) IS DISTINCT FROM 'NULL' AND f.superseded_by IS NOT NULL
           AS superseded,
       f.superseded_by::VARCHAR AS superseded_by
FROM items i
LEFT JOIN first_candidate f
       ON f.episode_id = i.episode_id AND f.step_idx = i.step_idx
      AND f.id_key = chk_json_key(i.id);
