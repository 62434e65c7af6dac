-- The parse tree of one statement as JSON (errors come back inside the JSON, not raised).
SELECT json_serialize_sql(?);
