-- Write a batch's rows, computed on the staging connection (sql/ingest/rows/) and handed over
-- as Arrow, inside the file's transaction.
INSERT INTO episodes BY NAME SELECT * FROM batch_episodes;
INSERT INTO steps BY NAME SELECT * FROM batch_steps;
INSERT INTO tool_calls BY NAME SELECT * FROM batch_tool_calls;
INSERT INTO tool_definitions BY NAME SELECT * FROM batch_tool_definitions;
