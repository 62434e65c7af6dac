-- Tables and views a user put in a DuckDB file: a file that holds any and no tracelab_meta is
-- not a tracelab store, and tracelab must not create its tables beside them.
SELECT table_name AS name FROM duckdb_tables()
WHERE database_name = current_database() AND NOT temporary AND NOT internal
UNION ALL
SELECT view_name FROM duckdb_views()
WHERE database_name = current_database() AND NOT temporary AND NOT internal
ORDER BY 1
