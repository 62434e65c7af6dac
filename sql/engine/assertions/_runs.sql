-- chk_runs: every run some checked case selects, once (after _selection.sql, _select_keys.sql).
CREATE OR REPLACE TEMP TABLE chk_runs AS
SELECT DISTINCT episode_id FROM chk_sel
