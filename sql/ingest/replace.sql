-- --replace: drop the stored rows of the episodes a batch replaces ($replaced: VARCHAR[]).
DELETE FROM episodes WHERE episode_id IN (SELECT unnest($replaced));
DELETE FROM steps WHERE episode_id IN (SELECT unnest($replaced));
DELETE FROM tool_calls WHERE episode_id IN (SELECT unnest($replaced));
DELETE FROM tool_definitions WHERE episode_id IN (SELECT unnest($replaced));
