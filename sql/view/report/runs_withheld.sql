-- view_withheld (tracelab.view.runs): what each step with a withheld field shows, from
-- view_withheld_fields (its kind and fields, a withheld one NULL, and the notices that replace
-- them: w_name for its tool), clipped as every step is (view_shown: sql/view/runs_shown.sql).
CREATE OR REPLACE TEMP TABLE view_withheld AS
SELECT episode_id, idx, w_data, w_text, w_error,
       unnest(view_shown(kind, coalesce(w_name, name), text, data, error, $clip))
FROM view_withheld_fields
