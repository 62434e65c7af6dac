-- The header and episode-level text of each shown run (tracelab.show): the runs of show_runs.
SELECT episode_id, agent, agent_version, model, case_id, termination, reward, n_steps,
       input, output, error
FROM episodes
WHERE episode_id IN (SELECT episode_id FROM show_runs)
ORDER BY episode_id
