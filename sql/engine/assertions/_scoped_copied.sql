-- _scoped.sql for a check of a small part of the stored runs (`check --since`, a narrow suite):
-- their rows copied once, so that each family query scans those rows only. Over views with a
-- semi-join, DuckDB moves a query's own filters (the needle search of _transcript.sql) below the
-- semi-join onto every stored row: at 1M stored runs and 10k selected, 8.6 CPU s instead of 0.2
-- (BENCHMARKS.md, issue 27). $lo and $hi are the least and greatest selected run id: a filter DuckDB
-- checks against each row group's min and max before reading it, so that where the selected
-- runs' ids lie together (ids that grow with time or name a batch, runs ingested in one go) only
-- their row groups are read; where they are spread, every row group is read as without it.
CREATE OR REPLACE TEMP TABLE chk_episodes_rows AS
SELECT * FROM episodes WHERE episode_id BETWEEN $lo AND $hi AND episode_id IN (SELECT episode_id FROM chk_runs);
CREATE OR REPLACE TEMP TABLE chk_steps_rows AS
SELECT * FROM steps WHERE episode_id BETWEEN $lo AND $hi AND episode_id IN (SELECT episode_id FROM chk_runs);
CREATE OR REPLACE TEMP TABLE chk_calls_rows AS
SELECT * FROM tool_calls WHERE episode_id BETWEEN $lo AND $hi AND episode_id IN (SELECT episode_id FROM chk_runs);
CREATE OR REPLACE TEMP TABLE chk_defs_rows AS
SELECT * FROM tool_definitions WHERE episode_id BETWEEN $lo AND $hi AND episode_id IN (SELECT episode_id FROM chk_runs);
CREATE OR REPLACE TEMP VIEW chk_episodes_in AS SELECT * FROM chk_episodes_rows;
CREATE OR REPLACE TEMP VIEW chk_steps_in AS SELECT * FROM chk_steps_rows;
CREATE OR REPLACE TEMP VIEW chk_calls_in AS SELECT * FROM chk_calls_rows;
CREATE OR REPLACE TEMP VIEW chk_defs_in AS SELECT * FROM chk_defs_rows;
