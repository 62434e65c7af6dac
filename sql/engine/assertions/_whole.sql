-- How many runs are selected (chk_runs holds each stored run at most once), how many are stored,
-- and the least and greatest selected run id.
SELECT (SELECT count(*) FROM chk_runs) AS selected, (SELECT count(*) FROM episodes) AS stored,
       (SELECT min(episode_id) FROM chk_runs) AS lo, (SELECT max(episode_id) FROM chk_runs) AS hi
