-- What the report shows of a text (tracelab.view.runs), one definition for every text it clips:
-- view_shown(kind, name, text, data, error, clip) is a step's tool and what it shows: what the
-- agent sent (view_sent: a call's args), what the step says (view_said: a call's text, else a
-- message's text or a result's payload) and its error, each clipped to `clip` characters with how
-- many more it had (NULL for none); an empty text shows nothing. A run's output and error are
-- clipped alike (view_clipped, view_more).
CREATE OR REPLACE TEMP MACRO view_clipped(value, clip) AS left(nullif(value, ''), clip);

CREATE OR REPLACE TEMP MACRO view_more(value, clip) AS nullif(greatest(length(nullif(value, '')) - clip, 0), 0);

CREATE OR REPLACE TEMP MACRO view_sent(kind, data) AS CASE WHEN kind IN ('tool_call', 'confirmation') THEN data END;

CREATE OR REPLACE TEMP MACRO view_said(kind, text, data) AS
    CASE WHEN kind IN ('tool_call', 'confirmation') THEN text ELSE coalesce(text, data) END;

CREATE OR REPLACE TEMP MACRO view_shown(kind, name, text, data, error, clip) AS
    {'tool': name,
     'sent': view_clipped(view_sent(kind, data), clip), 'more_sent': view_more(view_sent(kind, data), clip),
     'said': view_clipped(view_said(kind, text, data), clip), 'more_said': view_more(view_said(kind, text, data), clip),
     'err': view_clipped(error, clip), 'more_err': view_more(error, clip)}
