-- The columns of the store's episodes (a table, or a view over Parquet) and their types: the
-- sandbox where a `where` runs gets the same types.
DESCRIBE SELECT * FROM episodes
