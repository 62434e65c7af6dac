-- The episodes this file has stored so far, for de-duplication across its batches (decide.sql).
-- The staging connection cannot see them in the stored tables: the file's transaction is not
-- committed yet.
CREATE OR REPLACE TEMP TABLE file_seen (eid VARCHAR, hash VARCHAR, line BIGINT);
