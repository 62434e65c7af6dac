-- Every executed write, in run and call order (`tracelab demo`).
SELECT episode_id, tool_name, args_text
FROM executed_writes
ORDER BY episode_id, call_index
