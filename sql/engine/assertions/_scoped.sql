-- The rows of the selected runs (chk_runs) in the stored tables, as the family queries read them:
-- chk_episodes_in, chk_steps_in, chk_calls_in, chk_defs_in. This file is for a check of some of
-- the stored runs; _scoped_all.sql, for one of all of them (the usual full check), reads the
-- tables as they are, without a semi-join per scan (tracelab.engine.evaluate._scope decides).
CREATE OR REPLACE TEMP VIEW chk_episodes_in AS
SELECT * FROM episodes WHERE episode_id IN (SELECT episode_id FROM chk_runs);
CREATE OR REPLACE TEMP VIEW chk_steps_in AS
SELECT * FROM steps WHERE episode_id IN (SELECT episode_id FROM chk_runs);
CREATE OR REPLACE TEMP VIEW chk_calls_in AS
SELECT * FROM tool_calls WHERE episode_id IN (SELECT episode_id FROM chk_runs);
CREATE OR REPLACE TEMP VIEW chk_defs_in AS
SELECT * FROM tool_definitions WHERE episode_id IN (SELECT episode_id FROM chk_runs);
