-- The transcript (docs/trace-format.md §4): one row per fragment, the body leak and mention checks
-- search. `idx` is the step's position (NULL for the episode's own fields).
CREATE OR REPLACE VIEW transcript AS
SELECT episode_id, 'input' AS origin, NULL::INTEGER AS idx, input AS text FROM episodes WHERE input IS NOT NULL
UNION ALL
SELECT episode_id, 'output', NULL, output FROM episodes WHERE output IS NOT NULL
UNION ALL
SELECT episode_id, 'error', NULL, error FROM episodes WHERE error IS NOT NULL
UNION ALL
SELECT episode_id, 'step.text', idx, text FROM steps WHERE text IS NOT NULL
UNION ALL
SELECT episode_id, 'step.name', idx, name FROM steps WHERE name IS NOT NULL
UNION ALL
SELECT episode_id, 'step.error', idx, error FROM steps WHERE error IS NOT NULL
UNION ALL
SELECT s.episode_id,
       CASE WHEN t.type = 'KEY' THEN 'step.data.key' ELSE 'step.data' END,
       s.idx,
       t.text
FROM steps s,
     LATERAL (
         -- leaves: strings decoded, numbers and booleans as their JSON text
         SELECT CASE WHEN type = 'VARCHAR' THEN json_extract_string(value, '$') ELSE value::VARCHAR END AS text,
                type
         FROM json_tree(s.data)
         WHERE type NOT IN ('OBJECT', 'ARRAY', 'NULL')
         UNION ALL
         -- object keys; array positions ('0', '1', ...) are not keys (docs/duckdb-notes.md §10)
         SELECT key, 'KEY'
         FROM json_tree(s.data)
         WHERE key IS NOT NULL AND fullkey <> path || '[' || key || ']'
     ) t
WHERE s.data IS NOT NULL;
