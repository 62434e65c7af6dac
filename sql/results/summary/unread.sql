-- Files whose adapter left records of types it does not know unread, with those types and counts
-- (`tracelab info`: format drift; docs/formats.md, Coding-agent sessions: forward compatibility).
SELECT format, unread::VARCHAR AS unread
FROM sources
WHERE unread IS NOT NULL
ORDER BY format, source_uri
