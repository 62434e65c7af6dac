-- Every call each tool matcher matches (docs/suites.md §3, §8): chk_hits(matcher_id, episode_id,
-- call_index, call_step_idx). A matcher belongs to a case and looks only at that case's runs; it matches a call
-- that any of its branches (any_of) matches. Name: exact or a glob (chk_branch_names), never a
-- nameless call. status: the listed statuses. args_match: ARG is a top-level key (used even when null),
-- else a dotted path through objects only (parent_ptrs must all be objects); a string value as
-- is, any other as its JSON text; the RE2 pattern is searched anywhere; missing, null or
-- unparseable args match nothing.
CREATE OR REPLACE TEMP TABLE chk_hits AS
WITH candidates AS (
    SELECT b.matcher_id, b.branch_id, c.episode_id, c.call_index, c.call_step_idx
    FROM p_matcher_branches b
    JOIN p_matchers m ON m.matcher_id = b.matcher_id
    JOIN chk_branch_names n ON n.branch_id = b.branch_id
    JOIN chk_sel s ON s.case_id = m.case_id
    JOIN chk_calls c ON c.episode_id = s.episode_id AND c.tool_name = n.name
    WHERE b.statuses IS NULL OR list_contains(b.statuses, c.status)
),
arg_values AS (
    SELECT c.branch_id, c.episode_id, c.call_index, a.pattern,
           CASE
               WHEN json_type(c.args) IS DISTINCT FROM 'OBJECT' THEN NULL
               WHEN json_exists(c.args, a.key_ptr) THEN json_extract(c.args, a.key_ptr)
               WHEN list_bool_and(list_transform(a.parent_ptrs,
                                                 lambda p: json_type(c.args, p) = 'OBJECT'))
                   THEN json_extract(c.args, a.path_ptr)
           END AS value
    FROM (SELECT c.branch_id, c.episode_id, c.call_index, t.args
          FROM candidates c
          JOIN chk_calls_in t ON t.episode_id = c.episode_id AND t.call_index = c.call_index
          WHERE c.branch_id IN (SELECT branch_id FROM p_matcher_args)) c
    JOIN p_matcher_args a ON a.branch_id = c.branch_id
),
arg_texts AS (
    SELECT branch_id, episode_id, call_index, pattern,
           CASE json_type(value)
               WHEN 'VARCHAR' THEN json_extract_string(value, '$')
               WHEN 'NULL' THEN NULL
               ELSE value::VARCHAR
           END AS text
    FROM arg_values
),
-- a pattern that is not a constant is compiled for every row it meets: match each distinct
-- (text, pattern) once, since calls repeat their arguments
matches AS (
    SELECT text, pattern, coalesce(regexp_matches(text, pattern), false) AS ok
    FROM (SELECT DISTINCT text, pattern FROM arg_texts WHERE text IS NOT NULL)
),
args_ok AS (
    SELECT a.branch_id, a.episode_id, a.call_index, bool_and(coalesce(m.ok, false)) AS ok
    FROM arg_texts a
    LEFT JOIN matches m ON m.text = a.text AND m.pattern = a.pattern
    GROUP BY ALL
),
several AS (
    SELECT matcher_id FROM p_matcher_branches GROUP BY matcher_id HAVING count(*) > 1
)
-- a call two branches match counts once: only a matcher of several branches (any_of) can match a
-- call twice, so only its calls are made distinct (a DISTINCT over every call matched costs more)
SELECT c.matcher_id, c.episode_id, c.call_index, c.call_step_idx
FROM candidates c
LEFT JOIN args_ok a USING (branch_id, episode_id, call_index)
WHERE coalesce(a.ok, true) AND c.matcher_id NOT IN (SELECT matcher_id FROM several)
UNION ALL
SELECT DISTINCT c.matcher_id, c.episode_id, c.call_index, c.call_step_idx
FROM candidates c
LEFT JOIN args_ok a USING (branch_id, episode_id, call_index)
WHERE coalesce(a.ok, true) AND c.matcher_id IN (SELECT matcher_id FROM several);
