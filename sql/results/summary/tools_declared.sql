-- Runs that recorded their tool definitions, and runs that did not (docs/trace-format.md §4).
SELECT count(*) FILTER (WHERE tools_declared) AS declared,
       count(*) FILTER (WHERE NOT tools_declared) AS undeclared
FROM episodes
