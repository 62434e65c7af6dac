-- After Ctrl-C: which of the content hashes $hashes (the files of the transaction the interrupt
-- met) this ingest ($ingested_at) committed, read once the open transaction was rolled back. A
-- commit may complete just before the interrupt lands: the summary names what the store holds.
SELECT DISTINCT content_hash
FROM sources JOIN (SELECT unnest($hashes) AS content_hash) USING (content_hash)
WHERE ingested_at = $ingested_at;
