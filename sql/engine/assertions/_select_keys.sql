-- Adds the runs of the cases with a `select` to chk_sel: those of chk_matched
-- (_select_matched.sql; docs/suites.md §1, §7) whose case has no `where`, or whose `where` holds for the run.
-- chk_where_flags(episode_id, flags) holds the value of every `where` for each run a case with a
-- `where` could select; matched.where_idx indexes flags.
INSERT INTO chk_sel
SELECT m.case_id, m.episode_id, m.tools_declared
FROM chk_matched m
LEFT JOIN chk_where_flags f ON f.episode_id = m.episode_id
WHERE m.where_idx IS NULL OR f.flags[m.where_idx]
