-- Helpers for turning staged JSON into typed rows. TEMP: they live per connection.
CREATE OR REPLACE TEMP MACRO tl_str(j) AS json_extract_string(j, '$');
CREATE OR REPLACE TEMP MACRO tl_nn(j) AS CASE WHEN json_type(j) = 'NULL' THEN NULL ELSE j END;
CREATE OR REPLACE TEMP MACRO tl_jtype(j) AS CASE json_type(j)
    WHEN 'VARCHAR' THEN 'a string' WHEN 'OBJECT' THEN 'an object' WHEN 'ARRAY' THEN 'an array'
    WHEN 'BOOLEAN' THEN 'a boolean' WHEN 'NULL' THEN 'null' ELSE 'a number' END;
CREATE OR REPLACE TEMP MACRO tl_is_str(j) AS (j IS NULL OR json_type(j) IN ('VARCHAR', 'NULL'));
CREATE OR REPLACE TEMP MACRO tl_is_num(j) AS
    (j IS NULL OR json_type(j) IN ('BIGINT', 'UBIGINT', 'HUGEINT', 'DOUBLE', 'NULL'));
CREATE OR REPLACE TEMP MACRO tl_is_obj(j) AS (j IS NULL OR json_type(j) IN ('OBJECT', 'NULL'));
CREATE OR REPLACE TEMP MACRO tl_is_time(j) AS (j IS NULL OR json_type(j) = 'NULL'
    OR (json_type(j) = 'VARCHAR' AND try_cast(json_extract_string(j, '$') AS TIMESTAMPTZ) IS NOT NULL));
CREATE OR REPLACE TEMP MACRO tl_is_effect(j) AS (j IS NULL OR json_type(j) = 'NULL'
    OR (json_type(j) = 'VARCHAR' AND json_extract_string(j, '$') IN ('read', 'write')));
CREATE OR REPLACE TEMP MACRO tl_bad(field, j, want) AS field || ' must be ' || want || ', not ' || tl_jtype(j);
