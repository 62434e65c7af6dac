-- A store written by an earlier tracelab kept check_results row by row, in a table: its rows become
-- check_selected, check_exceptions and (for checks saved before it existed) check_assertions, and
-- the table gives way to the view (store/schema/check_results.sql). Every case of a saved check has
-- a row for each of its assertions and each run it selected, so nothing is lost; `pos` numbers an
-- assertion's first row among its check's, as the table held them.
INSERT INTO check_assertions (run_id, case_id, assertion_id, assertion_type, pos, runs, passed, yes, no, unknown)
SELECT run_id, case_id, assertion_id, any_value(assertion_type),
       min(row_pos), count(*), count_if(passed), count_if(exercised = 'yes'), count_if(exercised = 'no'),
       count_if(exercised = 'unknown')
FROM (SELECT *, rowid - min(rowid) OVER (PARTITION BY run_id) AS row_pos FROM check_results)
WHERE run_id NOT IN (SELECT run_id FROM check_assertions)
GROUP BY run_id, case_id, assertion_id;

INSERT INTO check_selected (run_id, case_id, episode_id)
SELECT DISTINCT run_id, case_id, episode_id FROM check_results;

INSERT INTO check_exceptions (run_id, case_id, assertion_id, assertion_type, episode_id, passed, exercised,
                              reason, step_idx)
SELECT run_id, case_id, assertion_id, assertion_type, episode_id, passed, exercised, reason, step_idx
FROM check_results
WHERE NOT is_plain_pass(passed, exercised, reason) OR step_idx IS NOT NULL;

DROP TABLE check_results;
