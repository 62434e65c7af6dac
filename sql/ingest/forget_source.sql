-- --replace reads a recorded file again (docs/trace-format.md §6): its earlier `sources` row and the
-- quarantine rows of that read make way for the new ones ($content_hash, $source_uri).
DELETE FROM quarantine WHERE source_uri = $source_uri
    AND source_uri IN (SELECT source_uri FROM sources WHERE content_hash = $content_hash);
DELETE FROM sources WHERE content_hash = $content_hash;
