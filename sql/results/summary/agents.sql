-- Runs per agent, the ten most frequent (`tracelab info`); runs naming no agent count as NULL.
-- `agents` is how many distinct agents (NULL one of them) there are in all, so that `info` can say
-- how many it left out.
SELECT agent, count(*) AS runs, count(*) OVER () AS agents
FROM episodes
GROUP BY agent
ORDER BY runs DESC, agent NULLS LAST
LIMIT 10
