-- retrieval_reports_omissions: every retrieval step has an integer `omitted` and
-- len(returned) + omitted = len(candidates) (absent lists are []). Not exercised without a
-- retrieval step. The reason names the first failing step, and the failure is located there.
WITH parts AS (
    -- each document parsed once for its three values
    SELECT episode_id, step_idx,
           json_extract(data, ['$.omitted', '$.returned', '$.candidates']) AS v
    FROM chk_retrieval_steps
),
checked AS (
    SELECT episode_id, step_idx,
           json_type(v[1]) AS omitted_type,
           CASE WHEN json_type(v[1]) IN ('BIGINT', 'UBIGINT') THEN v[1]::HUGEINT END AS omitted,
           coalesce(json_array_length(v[2]), 0) AS n_returned,
           coalesce(json_array_length(v[3]), 0) AS n_candidates
    FROM parts
),
bad AS (
    SELECT episode_id,
           arg_min(CASE WHEN omitted_type IS NULL THEN 'omitted is missing'
                        WHEN omitted IS NULL THEN 'omitted is not an integer'
                        ELSE n_returned || ' returned + ' || omitted || ' omitted != '
                             || n_candidates || ' candidates' END
                   || ' (retrieval step ' || step_idx || ')', step_idx) AS reason,
           min(step_idx) AS step_idx
    FROM checked
    WHERE omitted IS NULL OR n_returned + omitted <> n_candidates
    GROUP BY episode_id
),
has_steps AS (SELECT DISTINCT episode_id FROM chk_retrieval_steps)
SELECT p.unit_id, s.episode_id, b.reason IS NULL AS passed,
       CASE WHEN b.reason IS NULL AND h.episode_id IS NULL THEN 'no' ELSE 'yes' END AS exercised,
       coalesce(b.reason, CASE WHEN h.episode_id IS NULL THEN 'no retrieval step' END) AS reason,
       b.step_idx
FROM p_retrieval p
JOIN chk_sel s ON s.case_id = p.case_id
LEFT JOIN bad b ON b.episode_id = s.episode_id
LEFT JOIN has_steps h ON h.episode_id = s.episode_id
WHERE p.type = 'retrieval_reports_omissions'
