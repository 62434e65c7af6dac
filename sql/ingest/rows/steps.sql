-- The steps rows of a batch.
SELECT k.eid AS episode_id, st.idx, st.kind, st.name, st.call_id, st.text, st.error, st.data,
       st.status, st.ts, st.duration_ms, st.meta
FROM stage_steps st JOIN stage_keep k USING (line)
