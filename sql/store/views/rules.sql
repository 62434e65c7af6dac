-- The domain rules of docs/trace-format.md, each defined once, as macros of the store: the views
-- (calls, executed_writes, transcript, tool_availability) and the checks
-- (sql/engine/assertions/) both call them. Scalar macros are expanded where they are called, so
-- a check pays nothing for reading a rule from here.

-- A call's or a definition's effect (§6): the suite's `tools:` override (NULL outside a check),
-- else the effect the trace recorded (step, then definition), else the store's registry.
CREATE OR REPLACE MACRO resolved_effect(override, recorded, registry) AS
    coalesce(override, recorded, registry);

-- A plain pass: a verdict row that passed, exercised `yes`, without a reason (its step_idx is NULL:
-- a pass has none). A check stores only the other rows one by one (check_exceptions); check_results
-- lists the plain passes from the runs each case selected. A NULL passed or exercised is no plain pass.
CREATE OR REPLACE MACRO is_plain_pass(passed, exercised, reason) AS
    coalesce(passed AND exercised = 'yes' AND reason IS NULL, false);

-- An executed write (§4): a call whose resolved effect is `write` and that ran (status ok).
CREATE OR REPLACE MACRO is_executed_write(effect, status) AS
    effect = 'write' AND status = 'ok';

-- Availability of a tool in an episode (§4): available when called, or when tools are declared
-- and it is defined; unavailable when declared and neither; unknown when not declared and never
-- called. NULL `called` or `defined` count as false.
CREATE OR REPLACE MACRO tool_availability_of(called, defined, declared) AS
    CASE WHEN coalesce(called, false) OR (declared AND coalesce(defined, false)) THEN 'available'
         WHEN declared THEN 'unavailable'
         ELSE 'unknown' END;

-- The transcript's reading of a step's JSON `data` (§4): its tokens, every string (object keys
-- included; array positions are not keys, docs/duckdb-notes.md §10), number and boolean; a
-- key's token ends with its colon. A left-to-right scan never starts inside a string, since a
-- string is consumed whole from its opening quote.
CREATE OR REPLACE MACRO json_tokens(doc) AS
    regexp_extract_all(doc::VARCHAR,
                       '(?s)"(?:[^"\\]|\\.)*"(?:[ \t\n\r]*:)?|true|false|-?[0-9][0-9.eE+\-]*');

-- Whether a token of json_tokens is an object key.
CREATE OR REPLACE MACRO json_token_is_key(token) AS suffix(token, ':');

-- A token's text as the transcript holds it: a string decoded, a number or boolean as its JSON
-- text (json_extract_string, as json_tree reads a leaf).
CREATE OR REPLACE MACRO json_token_text(token) AS
    json_extract_string(CASE WHEN suffix(token, ':') THEN rtrim(token, ': ' || chr(9) || chr(10) || chr(13))
                             ELSE token END, '$');
