-- Helpers for typing staged JSON. TEMP: they live per connection.
-- from_json hands each field back as compact JSON text, with JSON null as SQL NULL; the first
-- character of that text is its JSON type, so a value's type needs no second parse.
CREATE OR REPLACE TEMP MACRO tl_type(j) AS CASE WHEN j IS NOT NULL THEN CASE left(j, 1)
    WHEN '"' THEN 'a string' WHEN '{' THEN 'an object' WHEN '[' THEN 'an array'
    WHEN 't' THEN 'a boolean' WHEN 'f' THEN 'a boolean' WHEN 'n' THEN 'null' ELSE 'a number' END END;
-- The same words for a json_type() name.
CREATE OR REPLACE TEMP MACRO tl_type_of(json_type_name) AS CASE json_type_name
    WHEN 'VARCHAR' THEN 'a string' WHEN 'OBJECT' THEN 'an object' WHEN 'ARRAY' THEN 'an array'
    WHEN 'BOOLEAN' THEN 'a boolean' WHEN 'NULL' THEN 'null' ELSE 'a number' END;
CREATE OR REPLACE TEMP MACRO tl_str(j) AS json_extract_string(j, '$');
-- The text of a JSON value: a string as is, anything else as JSON text.
CREATE OR REPLACE TEMP MACRO tl_text(j) AS CASE WHEN tl_type(j) = 'a string' THEN tl_str(j) ELSE j::VARCHAR END;
-- The reason a value of the wrong type gives; NULL (no reason) for a value of type `want`.
CREATE OR REPLACE TEMP MACRO tl_bad(field, j, want, want_words) AS
    CASE WHEN tl_type(j) <> want THEN field || ' must be ' || want_words || ', not ' || tl_type(j) END;
-- An ISO-8601 timestamp (docs/trace-format.md §5) as TIMESTAMPTZ; NULL for anything else. DuckDB's own
-- cast also takes 'infinity', 'epoch', offsets past ±14:00 and zone names, which land and then
-- break every read of the row: only a date, an optional time and an optional offset pass.
CREATE OR REPLACE TEMP MACRO tl_timestamp(s) AS CASE WHEN regexp_full_match(s,
    '[0-9]{4}-[0-9]{2}-[0-9]{2}([Tt ][0-9]{2}:[0-9]{2}(:[0-9]{2}([.,][0-9]{1,9})?)?([Zz]|[+-](0[0-9]|1[0-4])(:?[0-5][0-9])?)?)?')
    THEN try_cast(s AS TIMESTAMPTZ) END;
