-- The files already ingested among the content hashes $hashes (a list: a chunk of files looked
-- up with one query): the format and episode count recorded for each.
SELECT content_hash, any_value(format), any_value(episodes)
FROM sources JOIN (SELECT unnest($hashes) AS content_hash) USING (content_hash)
GROUP BY content_hash;
