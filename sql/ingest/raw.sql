-- The batch's staged records, refilled from Arrow for each batch. A table, not a registered
-- Arrow view: inside the file's transaction DuckDB keeps every replaced view, and with it the
-- batch's Arrow table, until commit, outside its memory limit; table rows count against the
-- limit and spill to disk.
CREATE OR REPLACE TEMP TABLE stage_raw (line BIGINT, doc VARCHAR, hash VARCHAR);
