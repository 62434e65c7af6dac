-- The episodes rows of a batch. Parameter: $ingested_at.
SELECT s.eid AS episode_id, s.agent, s.agent_version, s.model, s.case_id, s.principal, s.input,
       s.output, s.termination, s.error, s.reward, s.started_at, s.ended_at, s.tags,
       s.tools_declared, s.n_steps, s.meta, s.source_format, s.source_uri,
       s.src_line AS source_line, s.hash AS content_hash,
       $ingested_at AS ingested_at
FROM stage s JOIN stage_keep k USING (line)
