-- Names that may only appear in FROM (file readers and other table functions);
-- names that are also scalar functions (range, repeat, generate_series) are not listed.
SELECT function_name FROM duckdb_functions() WHERE function_type IN ('table', 'table_macro')
EXCEPT
SELECT function_name FROM duckdb_functions() WHERE function_type NOT IN ('table', 'table_macro');
