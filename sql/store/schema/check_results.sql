-- Every result of every saved check (docs/cli.md §4): one row per (case, assertion, run the case
-- selected). A check saves the runs each case selected (check_selected), each case's assertions
-- (check_assertions) and the results that are not plain passes (check_exceptions); every other
-- result is a plain pass: passed, exercised `yes`, no reason, no step. A `check --since` run saves
-- only what it evaluated, and keeps the rest of the check it continued by reference
-- (check_carried, check_renewed): check_selected_runs and check_notable_results list a check's
-- rows with those it keeps.

-- Whether check `for_run` keeps a result that the check `at_depth` steps up its chain saved for
-- run `of_episode`: no check below that one in the chain (for_run itself included) evaluated that
-- run afresh. Pass columns qualified by their table: an unqualified `episode_id` would be read
-- inside the macro's subquery as check_renewed's.
CREATE OR REPLACE MACRO check_kept(for_run, at_depth, of_episode) AS NOT EXISTS (
    SELECT 1 FROM check_carried n JOIN check_renewed w ON w.run_id = n.source_run
    WHERE n.run_id = for_run AND n.depth < at_depth AND w.episode_id = of_episode
);

-- The runs each case of each saved check selected, kept ones included.
CREATE OR REPLACE VIEW check_selected_runs AS
SELECT run_id, case_id, episode_id FROM check_selected
UNION ALL
SELECT c.run_id, s.case_id, s.episode_id
FROM check_carried c
JOIN check_runs r ON r.run_id = c.run_id
JOIN check_selected s ON s.run_id = c.source_run
WHERE c.depth > 0 AND list_contains(r.cases, s.case_id) AND check_kept(c.run_id, c.depth, s.episode_id);

-- The results of each saved check that are not plain passes, kept ones included.
CREATE OR REPLACE VIEW check_notable_results AS
SELECT run_id, case_id, assertion_id, assertion_type, episode_id, passed, exercised, reason, step_idx
FROM check_exceptions
UNION ALL
SELECT c.run_id, x.case_id, x.assertion_id, x.assertion_type, x.episode_id, x.passed, x.exercised, x.reason,
       x.step_idx
FROM check_carried c
JOIN check_runs r ON r.run_id = c.run_id
JOIN check_exceptions x ON x.run_id = c.source_run
WHERE c.depth > 0 AND list_contains(r.cases, x.case_id) AND check_kept(c.run_id, c.depth, x.episode_id);

CREATE OR REPLACE VIEW check_results AS
SELECT s.run_id, a.case_id, a.assertion_id, a.assertion_type, s.episode_id,
       coalesce(x.passed, true) AS passed,
       coalesce(x.exercised, 'yes') AS exercised,
       x.reason,
       x.step_idx
FROM check_selected_runs s
JOIN check_assertions a ON a.run_id = s.run_id AND a.case_id = s.case_id
LEFT JOIN check_notable_results x
       ON x.run_id = s.run_id AND x.case_id = s.case_id AND x.assertion_id = a.assertion_id
      AND x.episode_id = s.episode_id
