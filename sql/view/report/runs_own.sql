-- Each run's own texts (tracelab.view.runs), in the order the file uses them (`slot`): its header
-- (label, value; a value may be NULL; the notice of a withheld one: view_head_withheld), its output and error (label, then the text: whole when every
-- step of the run is (view_steps.whole, within the file's $cap), else clipped to $clip characters
-- as sql/view/runs_shown.sql clips; or the notice of a withheld one:
-- view_head_withheld), then its failures as a whole (view_whole: assertion, reason). A NULL text
-- is no text.
CREATE OR REPLACE TEMP TABLE view_own_texts AS
SELECT h.run, h.episode_id, coalesce(w.w_agent, h.agent) AS agent,
       coalesce(w.w_agent_version, h.agent_version) AS agent_version, coalesce(w.w_model, h.model) AS model,
       coalesce(w.w_case_id, h.case_id) AS case_id, coalesce(w.w_termination, h.termination) AS termination,
       h.reward, h.n_steps, w.w_output, w.w_error,
       view_clipped(CASE WHEN w.w_output IS NULL THEN h.output END, coalesce(b.clip, $cap)) AS output,
       view_more(CASE WHEN w.w_output IS NULL THEN h.output END, coalesce(b.clip, $cap)) AS more_output,
       view_clipped(CASE WHEN w.w_error IS NULL THEN h.error END, coalesce(b.clip, $cap)) AS error,
       view_more(CASE WHEN w.w_error IS NULL THEN h.error END, coalesce(b.clip, $cap)) AS more_error
FROM view_heads h
LEFT JOIN view_head_withheld w USING (episode_id)
LEFT JOIN (SELECT episode_id, CASE WHEN bool_and(whole) THEN $cap ELSE $clip END AS clip
           FROM view_steps GROUP BY episode_id) b USING (episode_id);

CREATE OR REPLACE TEMP TABLE view_own AS
SELECT run, slot, value FROM (
    -- the header: label, value, side by side in one scan
    SELECT run, unnest(range(14)) AS slot,
           unnest(['agent', agent, 'version', agent_version, 'model', model, 'case', case_id,
                   'termination', termination, 'reward', reward, 'steps', n_steps]) AS value
    FROM view_own_texts
    UNION ALL SELECT run, 14, 'output' FROM view_own_texts WHERE w_output IS NOT NULL OR output IS NOT NULL
    UNION ALL SELECT run, 15, coalesce(w_output, output) FROM view_own_texts
    UNION ALL SELECT run, 16, 'error' FROM view_own_texts WHERE w_error IS NOT NULL OR error IS NOT NULL
    UNION ALL SELECT run, 17, coalesce(w_error, error) FROM view_own_texts
    UNION ALL SELECT r.run, 18 + 2 * w.k, w.assertion FROM view_whole w JOIN view_runs r USING (episode_id)
    UNION ALL SELECT r.run, 19 + 2 * w.k, w.reason FROM view_whole w JOIN view_runs r USING (episode_id)
)
WHERE value IS NOT NULL
