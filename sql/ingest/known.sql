-- The files already ingested among the content hashes of _tl_hashes(content_hash), a chunk of
-- files looked up with one query: the format and episode count recorded for each.
SELECT content_hash, any_value(format), any_value(episodes)
FROM sources JOIN _tl_hashes USING (content_hash)
GROUP BY content_hash;
