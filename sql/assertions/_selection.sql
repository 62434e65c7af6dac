-- The runs each checked case selects (suite.md §1, §7): chk_sel(case_id, episode_id).
-- No `select`: runs whose case_id equals the case id (harness suites: or, for runs with no
-- case_id, whose input equals the case's input). A `select`: only its keys filter; string
-- keys are globs, given as RE2 patterns (tracelab.suite.globs), and a NULL field matches
-- nothing; every listed tag must be present.
-- The placeholder in `flags` becomes the list of the cases' `where` predicates (SQL by
-- design, validated at load); p_select.where_idx indexes it. It sees `episodes` alone.
CREATE OR REPLACE TEMP TABLE chk_sel AS
WITH flags AS (
    SELECT episode_id, __WHERE_FLAGS__ AS flags FROM episodes
)
SELECT s.case_id, e.episode_id
FROM p_select s JOIN episodes e ON e.case_id = s.case_id
WHERE NOT s.has_select
UNION ALL
SELECT s.case_id, e.episode_id
FROM p_select s JOIN episodes e ON e.input = s.input
WHERE NOT s.has_select AND e.case_id IS NULL
UNION ALL
SELECT s.case_id, e.episode_id
FROM p_select s, episodes e JOIN flags f ON f.episode_id = e.episode_id
WHERE s.has_select
  AND (s.case_id_re IS NULL OR regexp_full_match(e.case_id, s.case_id_re))
  AND (s.agent_re IS NULL OR regexp_full_match(e.agent, s.agent_re))
  AND (s.agent_version_re IS NULL OR regexp_full_match(e.agent_version, s.agent_version_re))
  AND (s.model_re IS NULL OR regexp_full_match(e.model, s.model_re))
  AND (len(s.tags) = 0 OR list_has_all(e.tags, s.tags))
  AND (s.where_idx IS NULL OR f.flags[s.where_idx]);

CREATE OR REPLACE TEMP TABLE chk_runs AS
SELECT episode_id, tools_declared
FROM episodes
WHERE episode_id IN (SELECT episode_id FROM chk_sel);
