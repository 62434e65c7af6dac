-- How many row groups the run tables are stored in (tracelab.ingest.pipeline.compact): DuckDB's
-- vacuum at a checkpoint merges part-filled ones, and this count stops falling once it has no
-- more to merge.
SELECT (SELECT count(DISTINCT row_group_id) FROM pragma_storage_info('episodes'))
     + (SELECT count(DISTINCT row_group_id) FROM pragma_storage_info('steps'))
     + (SELECT count(DISTINCT row_group_id) FROM pragma_storage_info('tool_calls'))
     + (SELECT count(DISTINCT row_group_id) FROM pragma_storage_info('tool_definitions'))
