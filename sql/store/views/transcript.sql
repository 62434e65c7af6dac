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
-- the data's strings, numbers and booleans, and its object keys (macros json_tokens, json_token_text
-- of rules.sql: the check reads a document the same way)
SELECT s.episode_id,
       CASE WHEN json_token_is_key(t.token) THEN 'step.data.key' ELSE 'step.data' END,
       s.idx,
       json_token_text(t.token)
FROM steps s, unnest(json_tokens(s.data)) AS t(token)
WHERE s.data IS NOT NULL;
