-- The checks whose results a `check --since` run keeps, by reference rather than copied: for run
-- run_id, each check up its chain (source_run: the check it continued at depth 1, that one's at 2,
-- ...), and the run itself at depth 0. A result source_run saved (check_exceptions, check_selected)
-- belongs to run_id too when its case is one run_id checked and no check below it in the chain
-- evaluated its run afresh (check_renewed; macro check_kept, store/schema/check_results.sql). A
-- full check has no rows here. Written by `tracelab check --since`.
CREATE TABLE IF NOT EXISTS check_carried (
    run_id     VARCHAR NOT NULL,
    source_run VARCHAR NOT NULL,
    depth      INTEGER NOT NULL
)
