-- Every result of every saved check (docs/cli.md §4): one row per (case, assertion, run the case
-- selected). A check saves the runs each case selected (check_selected), each case's assertions
-- (check_assertions) and the results that are not plain passes (check_exceptions); every other
-- result is a plain pass: passed, exercised `yes`, no reason, no step.
CREATE OR REPLACE VIEW check_results AS
SELECT s.run_id, a.case_id, a.assertion_id, a.assertion_type, s.episode_id,
       coalesce(x.passed, true) AS passed,
       coalesce(x.exercised, 'yes') AS exercised,
       x.reason,
       x.step_idx
FROM check_selected s
JOIN check_assertions a ON a.run_id = s.run_id AND a.case_id = s.case_id
LEFT JOIN check_exceptions x
       ON x.run_id = s.run_id AND x.case_id = s.case_id AND x.assertion_id = a.assertion_id
      AND x.episode_id = s.episode_id
