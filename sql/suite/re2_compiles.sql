-- Compiles a pattern with DuckDB's RE2 exactly as assertions will; a rejected pattern raises.
SELECT regexp_matches('', ?);
