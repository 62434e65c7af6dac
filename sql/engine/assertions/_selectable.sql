-- chk_selectable: the runs a check selects among (_selection.sql, _select_matched.sql): every stored run.
CREATE OR REPLACE TEMP VIEW chk_selectable AS SELECT * FROM episodes;
