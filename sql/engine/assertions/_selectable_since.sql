-- chk_selectable for an incremental check (`check --since`): only the runs ingested after $since.
-- Whether a case selects a run depends on that run alone (its keys, tags and `where`: docs/suites.md
-- §1, §7; a `where` has no subquery, aggregate or window), so selecting among these gives the new
-- runs the cases a full check gives them, and the earlier check's selection of the others is kept
-- (check_carried). Copied once: the few rows are read by several statements; DuckDB skips the
-- row groups of older runs by the min and max of ingested_at.
CREATE OR REPLACE TEMP TABLE chk_selectable_rows AS SELECT * FROM episodes WHERE ingested_at > $since;
CREATE OR REPLACE TEMP VIEW chk_selectable AS SELECT * FROM chk_selectable_rows;
