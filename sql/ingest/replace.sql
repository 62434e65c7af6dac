-- --replace: drop the stored rows of episodes this batch replaces.
DELETE FROM episodes WHERE episode_id IN (SELECT eid FROM stage_decide WHERE action = 'replace');
DELETE FROM steps WHERE episode_id IN (SELECT eid FROM stage_decide WHERE action = 'replace');
DELETE FROM tool_calls WHERE episode_id IN (SELECT eid FROM stage_decide WHERE action = 'replace');
DELETE FROM tool_definitions WHERE episode_id IN (SELECT eid FROM stage_decide WHERE action = 'replace');
