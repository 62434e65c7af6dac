-- An incremental check (`check --since`): keep only the selected runs ingested after $since, before
-- chk_runs is built from them (_runs.sql). Selection itself still sees every run, so a case's
-- selection rules mean the same thing.
DELETE FROM chk_sel WHERE episode_id IN (SELECT episode_id FROM episodes WHERE ingested_at <= $since);
