-- Availability of one tool in every episode (docs/trace-format.md §4, macro tool_availability_of of
-- rules.sql): available: called, or declared and defined; unavailable: declared, not defined,
-- never called; unknown: tools not declared and never called.
-- Usage: SELECT * FROM tool_availability('send_money').
CREATE OR REPLACE MACRO tool_availability(tool) AS TABLE
SELECT e.episode_id,
       tool AS tool_name,
       tool_availability_of(e.episode_id IN (SELECT episode_id FROM calls WHERE tool_name = tool),
                            e.episode_id IN (SELECT episode_id FROM tool_definitions WHERE name = tool),
                            e.tools_declared) AS availability
FROM episodes e;
