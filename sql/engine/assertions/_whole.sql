-- Whether chk_runs holds every stored run (it holds each stored run at most once).
SELECT (SELECT count(*) FROM chk_runs) = (SELECT count(*) FROM episodes) AS whole
