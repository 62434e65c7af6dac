-- Drop what locating leaks created (tracelab.suite.locate).
DROP VIEW IF EXISTS loc_transcript;
DROP TABLE IF EXISTS loc_episodes;
DROP TABLE IF EXISTS loc_steps;
