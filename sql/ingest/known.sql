-- The files already ingested among a set of content hashes ($hashes: VARCHAR[]), one query for
-- many files: the format and episode count recorded for each.
SELECT content_hash, any_value(format), any_value(episodes)
FROM sources
WHERE content_hash IN (SELECT unnest($hashes))
GROUP BY content_hash;
