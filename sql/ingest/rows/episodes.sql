-- The episodes rows of a batch. Parameters: $ingested_at; $fill_agent, $fill_model (VARCHAR or
-- NULL) and $fill_tags (VARCHAR[]): `ingest --agent/--model/--tag`, set where the record has no
-- agent / model (NULL or empty), tags added after the record's own (each once).
SELECT s.eid AS episode_id, coalesce(nullif(s.agent, ''), $fill_agent) AS agent, s.agent_version,
       coalesce(nullif(s.model, ''), $fill_model) AS model, s.case_id, s.principal, s.input,
       s.output, s.termination, s.error, s.reward, s.started_at, s.ended_at,
       CASE WHEN len($fill_tags::VARCHAR[]) = 0 THEN s.tags
            ELSE list_concat(coalesce(s.tags, []::VARCHAR[]),
                             list_filter($fill_tags::VARCHAR[], lambda t: NOT list_contains(coalesce(s.tags, []::VARCHAR[]), t)))
       END AS tags,
       s.tools_declared, s.n_steps, s.meta, s.source_format, s.source_uri,
       s.src_line AS source_line, s.hash AS content_hash,
       $ingested_at AS ingested_at
FROM stage s JOIN stage_keep k USING (line)
