-- The runs a case with a `where` could select, with the columns of episodes the `where`s use:
-- what tracelab.suite.where.where_flags copies to its sandbox. __COLUMNS__ is episode_id and
-- the quoted names of the columns used, taken from the store's catalog.
SELECT __COLUMNS__
FROM episodes
WHERE episode_id IN (SELECT episode_id FROM chk_matched WHERE where_idx IS NOT NULL)
