-- retrieval_within_budget: in every retrieval step with a numeric budget_bytes, the returned
-- items' content (every occurrence; an id with no candidate has none) sums to at most it, in
-- UTF-8 bytes (strlen). Not exercised without such a step. A failure is located at the first
-- step over its budget.
WITH budget_values AS MATERIALIZED (
    -- each document parsed once (inlined into the type test, the extraction would run once per
    -- listed type)
    SELECT episode_id, step_idx, json_extract(data, '$.budget_bytes') AS budget_bytes
    FROM chk_retrieval_steps
),
budgeted AS (
    SELECT episode_id, step_idx, budget_bytes::DOUBLE AS budget, budget_bytes::VARCHAR AS budget_text
    FROM budget_values
    WHERE json_type(budget_bytes) IN ('BIGINT', 'UBIGINT', 'DOUBLE', 'HUGEINT')
),
used AS (
    SELECT b.episode_id, b.step_idx, b.budget, b.budget_text,
           coalesce(sum(strlen(t.content)), 0) AS bytes
    FROM budgeted b
    LEFT JOIN chk_returned t ON t.episode_id = b.episode_id AND t.step_idx = b.step_idx
    GROUP BY ALL
),
over AS (
    SELECT episode_id,
           arg_min('retrieval step ' || step_idx || ' returned ' || bytes
                   || ' bytes, budget_bytes ' || budget_text, step_idx) AS reason,
           min(step_idx) AS step_idx
    FROM used WHERE bytes > budget
    GROUP BY episode_id
),
has_budget AS (SELECT DISTINCT episode_id FROM budgeted)
SELECT p.unit_id, s.episode_id, o.reason IS NULL AS passed,
       CASE WHEN o.reason IS NULL AND h.episode_id IS NULL THEN 'no' ELSE 'yes' END AS exercised,
       coalesce(o.reason, CASE WHEN h.episode_id IS NULL THEN 'no retrieval step with budget_bytes' END)
           AS reason,
       o.step_idx
FROM p_retrieval p
JOIN chk_sel s ON s.case_id = p.case_id
LEFT JOIN over o ON o.episode_id = s.episode_id
LEFT JOIN has_budget h ON h.episode_id = s.episode_id
WHERE p.type = 'retrieval_within_budget'
