-- The report's runs (tracelab.view.runs): each shown run (show_runs) that is stored, and its place
-- in the file (by id).
CREATE OR REPLACE TEMP TABLE view_runs AS
SELECT episode_id, row_number() OVER (ORDER BY episode_id) - 1 AS run
FROM episodes
WHERE episode_id IN (SELECT episode_id FROM show_runs);

-- view_heads: each run's header fields as the file shows them (reward as Python's format 'g' writes
-- it), its input, output and error whole, and `marked`: whether one of them (or a header field) may hold one of the
-- leaked strings $needles (as sql/view/runs_read.sql marks a step; no escapes here: they are plain
-- text). Python looks at the marked ones field by field.
CREATE OR REPLACE TEMP TABLE view_heads AS
WITH heads AS (
    SELECT r.run, e.episode_id, e.agent, e.agent_version, e.model, e.case_id, e.termination,
           printf('%g', e.reward) AS reward, e.n_steps::VARCHAR AS n_steps, e.input, e.output, e.error,
           concat_ws(chr(0), e.input, e.output, e.error, e.agent, e.agent_version, e.model, e.case_id,
                     e.termination) AS joined
    FROM episodes e
    JOIN view_runs r USING (episode_id)
)
SELECT * EXCLUDE (joined),
       coalesce(list_bool_or([contains(lower(joined), lower(n)) for n in $needles::VARCHAR[]])
                OR (list_bool_or([strlen(n) <> length(n) for n in $needles::VARCHAR[]])
                    AND strlen(joined) <> length(joined)), false) AS marked
FROM heads
