-- Every step of the shown runs (show_runs(episode_id)) in order, with its call's status and
-- effect as resolved: a tool_call step is its call's call_step_idx, a tool_result step its
-- result_step_idx (a result without a name of its own shows its call's tool). `data` comes as
-- JSON text (a tool_call's args, a result's payload).
--
-- The effect is the `calls` view's (sql/store/views/calls.sql: recorded on the step, then on the
-- definition, then the store's registry), under the saved check's `tools:` overrides when there
-- are some (show_overrides, sql/view/show/overrides.sql): as the check resolved it
-- (sql/engine/assertions/_tools.sql). `effect_source` says which: suite, step, definition or
-- registry. `offset_ms` is the step's time since the run's first timed step; `tokens` what the
-- source recorded in the step's meta (NULL: nothing).
WITH shown_calls AS (
    SELECT episode_id, call_step_idx, result_step_idx, tool_name, status, effect, effect_source
    FROM calls
    WHERE episode_id IN (SELECT episode_id FROM show_runs)
), overridden AS (
    SELECT n.name, first(o.effect ORDER BY o.is_glob, o.pos) AS effect
    FROM (SELECT DISTINCT tool_name AS name FROM shown_calls WHERE tool_name IS NOT NULL) n
    JOIN show_overrides o ON regexp_full_match(n.name, o.regex)
    GROUP BY n.name
), started AS (
    -- each run's first timed step, for `offset_ms` (a grouped join: a window would carry every
    -- step's whole text through its sort)
    SELECT episode_id, min(ts) AS first_ts
    FROM steps
    WHERE ts IS NOT NULL AND episode_id IN (SELECT episode_id FROM show_runs)
    GROUP BY episode_id
), resolved AS (
    SELECT c.* REPLACE (coalesce(v.effect, c.effect) AS effect,
                        CASE WHEN v.effect IS NOT NULL THEN 'suite' ELSE c.effect_source END AS effect_source)
    FROM shown_calls c
    LEFT JOIN overridden v ON v.name = c.tool_name
)
SELECT s.episode_id, s.idx, s.kind, coalesce(s.name, r.tool_name) AS name, s.call_id, s.text, s.error, s.data::VARCHAR AS data,
       coalesce(s.status, c.status, r.status) AS status, coalesce(c.effect, r.effect) AS effect,
       CASE WHEN c.effect IS NOT NULL THEN c.effect_source WHEN r.effect IS NOT NULL THEN r.effect_source END
           AS effect_source,
       s.duration_ms,
       date_diff('millisecond', t.first_ts, s.ts) AS offset_ms,
       CASE WHEN s.meta IS NOT NULL OR s.kind = 'budget' THEN step_tokens(s.kind, s.meta, s.data) END AS tokens
FROM steps s
LEFT JOIN resolved c ON c.episode_id = s.episode_id AND c.call_step_idx = s.idx
LEFT JOIN resolved r ON r.episode_id = s.episode_id AND r.result_step_idx = s.idx
LEFT JOIN started t ON t.episode_id = s.episode_id
WHERE s.episode_id IN (SELECT episode_id FROM show_runs)
ORDER BY s.episode_id, s.idx
