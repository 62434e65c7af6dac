-- How many runs are selected (chk_runs holds each stored run at most once), and how many are stored.
SELECT (SELECT count(*) FROM chk_runs) AS selected, (SELECT count(*) FROM episodes) AS stored
