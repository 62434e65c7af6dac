-- Files ingested per format, most first (`tracelab info`).
SELECT format, count(*) AS files
FROM sources
GROUP BY format
ORDER BY files DESC, format
