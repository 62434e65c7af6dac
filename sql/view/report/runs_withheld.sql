-- view_withheld (tracelab.view.runs): what each step with a withheld field shows, from
-- view_withheld_fields (its kind and fields, a withheld one NULL, and the notices that replace
-- them: w_name for its tool), whole or clipped as view_steps says for the step (`whole`, within
-- the file's $cap: sql/view/report/runs_read.sql; view_shown: sql/view/runs_shown.sql).
CREATE OR REPLACE TEMP TABLE view_withheld AS
SELECT w.episode_id, w.idx, w.w_data, w.w_text, w.w_error,
       unnest(view_shown(w.kind, coalesce(w.w_name, w.name), w.text, w.data, w.error,
                         CASE WHEN coalesce(s.whole, false) THEN $cap ELSE $clip END))
FROM view_withheld_fields w
LEFT JOIN view_steps s USING (episode_id, idx)
