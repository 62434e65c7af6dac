-- The files recorded in sources with the same path, size and modification time as now ($uris,
-- $sizes, $times: one list each, in the same order): already ingested, known without reading
-- them (a re-run over a folder of files already ingested). Anything else is read and looked up
-- by hash (known.sql).
SELECT s.source_uri, any_value(s.format), any_value(s.episodes)
FROM sources s
JOIN (SELECT unnest($uris) AS source_uri, unnest($sizes) AS file_size,
             unnest($times) AS file_mtime_ns) t
    ON s.source_uri = t.source_uri AND s.file_size = t.file_size
    AND s.file_mtime_ns = t.file_mtime_ns
GROUP BY s.source_uri;
