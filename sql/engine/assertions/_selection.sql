-- The runs each checked case selects (docs/suites.md §1, §7): chk_sel(case_id, episode_id,
-- tools_declared), the run's tools_declared carried along for the families that read it (one
-- join with each run fewer), and chk_runs, every selected run once. This file selects for the
-- cases without a `select`: runs whose case_id equals the case id (harness suites: or, for runs
-- with no case_id, whose input equals the case's input); _select_keys.sql adds the cases with
-- one, when there are any. The runs are those of chk_selectable (_selectable.sql: all of them;
-- with `--since`, the new ones).
CREATE OR REPLACE TEMP TABLE chk_sel AS
SELECT s.case_id, e.episode_id, e.tools_declared
FROM p_select s JOIN chk_selectable e ON e.case_id = s.case_id
WHERE NOT s.has_select
UNION ALL
SELECT s.case_id, e.episode_id, e.tools_declared
FROM p_select s JOIN chk_selectable e ON e.input = s.input
WHERE NOT s.has_select AND s.input IS NOT NULL AND e.case_id IS NULL
