-- Availability of one tool in every episode (docs/trace-format.md §4):
-- available: called, or declared and defined; unavailable: declared, not defined, never called;
-- unknown: tools not declared and never called. Usage: SELECT * FROM tool_availability('send_money').
CREATE OR REPLACE MACRO tool_availability(tool) AS TABLE
SELECT e.episode_id,
       tool AS tool_name,
       CASE
           WHEN e.episode_id IN (SELECT episode_id FROM calls WHERE tool_name = tool) THEN 'available'
           WHEN e.tools_declared
                AND e.episode_id IN (SELECT episode_id FROM tool_definitions WHERE name = tool) THEN 'available'
           WHEN e.tools_declared THEN 'unavailable'
           ELSE 'unknown'
       END AS availability
FROM episodes e;
