-- Runs per agent, the ten most frequent (`tracelab info`); runs naming no agent count as NULL.
SELECT agent, count(*) AS runs
FROM episodes
GROUP BY agent
ORDER BY runs DESC, agent NULLS LAST
LIMIT 10
