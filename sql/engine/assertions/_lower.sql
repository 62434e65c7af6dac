-- $texts lower-cased by DuckDB's lower() (docs/trace-format.md §5), for patterns built in Python:
-- Python's str.lower() differs (İ, final Σ), and a pattern must see what the query compares.
SELECT list_transform($texts::VARCHAR[], lambda t: lower(t)) AS lowered
