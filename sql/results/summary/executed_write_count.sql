-- How many calls the `executed_writes` view holds (tool calls with effect write that ran).
SELECT count(*) FROM executed_writes
