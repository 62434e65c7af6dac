-- Per case and assertion of saved check $run (tracelab.view): results, passed, failed (for the
-- summary), exercised yes / no / unknown; `pos` keeps the order the check wrote them in (the suite's).
-- The rows are numbered as they are scanned (in the order written) rather than by `rowid`, which a
-- Parquet store's view over check_results/ (a check saved by `check --engine spark`) does not have.
WITH written AS (
    SELECT case_id, assertion_id, assertion_type, passed, exercised, row_number() OVER () AS pos
    FROM check_results
    WHERE run_id = $run
)
SELECT case_id, assertion_id, any_value(assertion_type) AS assertion_type, count(*) AS runs,
       count(*) FILTER (WHERE passed) AS passed, count(*) FILTER (WHERE NOT passed) AS failed,
       count(*) FILTER (WHERE exercised = 'yes') AS yes,
       count(*) FILTER (WHERE exercised = 'no') AS no,
       count(*) FILTER (WHERE exercised = 'unknown') AS unknown,
       min(pos) AS pos
FROM written
GROUP BY case_id, assertion_id
ORDER BY pos
