-- Drop what a check created, so a long-lived connection (a notebook) keeps no stale state.
DROP TABLE IF EXISTS chk_sel;
DROP TABLE IF EXISTS chk_matched;
DROP TABLE IF EXISTS chk_runs;
DROP TABLE IF EXISTS chk_names;
DROP TABLE IF EXISTS chk_branch_names;
DROP TABLE IF EXISTS chk_calls;
DROP TABLE IF EXISTS chk_defs;
DROP TABLE IF EXISTS chk_tools;
DROP TABLE IF EXISTS chk_transcript;
DROP TABLE IF EXISTS chk_needle_found;
DROP TABLE IF EXISTS chk_hits;
DROP TABLE IF EXISTS chk_retrieval_steps;
DROP TABLE IF EXISTS chk_candidates;
DROP TABLE IF EXISTS chk_returned;
DROP TABLE IF EXISTS chk_out;
DROP MACRO IF EXISTS chk_json_key;
DROP MACRO IF EXISTS chk_json_text;
