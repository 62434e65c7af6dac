-- _scoped.sql when chk_runs holds every stored run: the tables themselves.
CREATE OR REPLACE TEMP VIEW chk_episodes_in AS SELECT * FROM episodes;
CREATE OR REPLACE TEMP VIEW chk_steps_in AS SELECT * FROM steps;
CREATE OR REPLACE TEMP VIEW chk_calls_in AS SELECT * FROM tool_calls;
CREATE OR REPLACE TEMP VIEW chk_defs_in AS SELECT * FROM tool_definitions;
