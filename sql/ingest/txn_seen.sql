-- The episodes stored so far in the open transaction (by any of its files, in any of its batches),
-- for de-duplication across batches and files (decide.sql). The staging connection cannot see
-- them in the stored tables: the transaction is not committed yet. Emptied when one begins.
CREATE OR REPLACE TEMP TABLE txn_seen (eid VARCHAR, hash VARCHAR, file_no BIGINT, line BIGINT);
