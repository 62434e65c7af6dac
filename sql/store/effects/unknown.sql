-- The tools called with an unknown effect (neither recorded nor in the registry), most called
-- first, so a person can declare them in one pass with `tracelab effects set`.
SELECT tool_name, count(*) AS calls, count(DISTINCT episode_id) AS runs
FROM calls
WHERE effect IS NULL
GROUP BY tool_name
ORDER BY calls DESC, runs DESC, tool_name NULLS LAST
