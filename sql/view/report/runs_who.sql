-- Who each failing run the report lists is (tracelab.view): its model, agent and case or task id,
-- for the runs $runs.
SELECT episode_id, model, agent, case_id
FROM episodes
WHERE episode_id IN (SELECT unnest($runs::VARCHAR[]))
