-- $texts lower-cased by DuckDB's lower() (trace-format §5), for patterns built in Python:
-- Python's str.lower() differs (İ, final Σ), and a pattern must see what the query compares.
SELECT list_transform($texts::VARCHAR[], lambda t: lower(t)) AS lowered
