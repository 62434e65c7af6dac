-- The episodes and steps of the runs in loc_leaks, for loc_transcript (tracelab.suite.locate):
-- the transcript view's query run over these few runs instead of the whole store (a filter on
-- the view does not reach below its unnest of each step's data, so it would expand every stored step).
CREATE OR REPLACE TEMP TABLE loc_episodes AS
SELECT * FROM episodes WHERE episode_id IN (SELECT episode_id FROM loc_leaks);

CREATE OR REPLACE TEMP TABLE loc_steps AS
SELECT * FROM steps WHERE episode_id IN (SELECT episode_id FROM loc_leaks);
