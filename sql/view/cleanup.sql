-- Drops what sql/view/case_runs.sql made (tracelab.view).
DROP TABLE IF EXISTS view_case_runs
