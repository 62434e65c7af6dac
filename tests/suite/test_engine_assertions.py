"""The typed assertions of suite.md §3 (retrieval and sequence rules have their own files)."""
from __future__ import annotations

import pytest

from tests.suite.engine_support import Checker, call, calls, ep, verdicts
from tracelab.engine.evaluate import evaluate
from tracelab.suite import load_suite


@pytest.fixture
def checker(store, tmp_path) -> Checker:
    return Checker(store, tmp_path)


def passed(result, assertion_id: str) -> dict[str, bool]:
    return {run: v[0] for run, v in verdicts(result, assertion_id).items()}


def test_trace_must_call_tool_counts_within_min_and_max(checker):
    checker.ingest(ep("once", *call("get_roster")),
                   ep("twice", *calls(call("get_roster"), call("get_roster", status="denied"))),
                   ep("thrice", *calls(*[call("get_roster")] * 3)),
                   ep("never", *call("lookup")))
    result = checker.check("""
        - id: c
          assertions:
            - {type: trace_must_call_tool, id: at-least, tool: get_roster}
            - {type: trace_must_call_tool, id: exactly, tool: get_roster, min_calls: 2, max_calls: 2}
            - {type: trace_must_call_tool, id: at-most, tool: get_roster, min_calls: 0, max_calls: 1}
    """)
    assert verdicts(result, "at-least") == {
        "once": (True, "yes", None), "twice": (True, "yes", None), "thrice": (True, "yes", None),
        "never": (False, "yes", '0 matching calls of "get_roster", expected at least 1'),
    }
    assert verdicts(result, "exactly") == {
        "once": (False, "yes", '1 matching call of "get_roster", expected exactly 2'),
        "twice": (True, "yes", None),
        "thrice": (False, "yes", '3 matching calls of "get_roster", expected exactly 2'),
        "never": (False, "yes", '0 matching calls of "get_roster", expected exactly 2'),
    }
    assert passed(result, "at-most") == {"once": True, "twice": False, "thrice": False,
                                         "never": True}


def test_trace_must_not_call_tool_exercise_follows_availability(checker):
    checker.ingest(
        ep("called", *call("delete_user"), tools=[{"name": "delete_user"}]),
        ep("called-undeclared", *call("delete_user")),
        ep("offered", *call("lookup"), tools=[{"name": "delete_user"}, {"name": "lookup"}]),
        ep("not-offered", *call("lookup"), tools=[{"name": "lookup"}]),
        ep("unknown", *call("lookup")),
        ep("other-args", *call("delete_user", {"id": "7"})),
    )
    result = checker.check("""
        - id: c
          assertions:
            - {type: trace_must_not_call_tool, id: plain, tool: delete_user}
            - type: trace_must_not_call_tool
              id: first-user
              tool: {tool: delete_user, args_match: {id: "^1$"}}
    """)
    assert verdicts(result, "plain") == {
        "called": (False, "yes", '1 matching call of "delete_user", expected none'),
        "called-undeclared": (False, "yes", '1 matching call of "delete_user", expected none'),
        "offered": (True, "yes", None),
        "not-offered": (True, "no", '"delete_user" was not offered'),
        "unknown": (True, "unknown", "the tools offered were not recorded"),
        "other-args": (False, "yes", '1 matching call of "delete_user", expected none'),
    }
    # availability is by name: a call that does not match still makes the tool available
    assert verdicts(result, "first-user")["other-args"] == (True, "yes", None)


def test_tool_matchers_args_match_and_status(checker):
    args = {"recipient": "US1300", "nested": {"iban": "DE12"}, "a.b": None, "a": {"b": "x"},
            "amount": 120, "list": [{"x": 1}], "flag": True, "note": "line1\nline2"}
    checker.ingest(ep("paid", *call("pay", args)),
                   ep("garbled", *call("pay", "{not json")),
                   ep("no-args", *call("pay")))
    matchers = {
        "top-level": "{recipient: '^US13'}",
        "dotted-path": "{nested.iban: '^DE'}",
        "top-level-key-wins-even-null": "{a.b: x}",
        "number-as-json-text": "{amount: '^120$'}",
        "never-into-arrays": "{list.0.x: '1'}",
        "boolean-as-json-text": "{flag: '^true$'}",
        "object-as-json-text": "{nested: '\"iban\":\"DE12\"'}",
        "all-must-match": "{recipient: '^US13', amount: '^9'}",
        "missing-arg": "{nobody: '.*'}",
        "dollar-at-end-only": "{note: 'line1$'}",
    }
    lines = [f"    - {{type: trace_must_call_tool, id: {name}, tool: {{tool: pay, args_match: {m}}}}}"
             for name, m in matchers.items()]
    lines += ["    - {type: trace_must_call_tool, id: status-ok, tool: {tool: pay, status: [ok]}}",
              "    - {type: trace_must_call_tool, id: status-denied,"
              " tool: {tool: pay, status: [denied, error]}}"]
    result = checker.check("- id: c\n  assertions:\n" + "\n".join(lines) + "\n")
    got = {name: passed(result, name)["paid"] for name in [*matchers, "status-ok", "status-denied"]}
    assert got == {
        "top-level": True, "dotted-path": True, "top-level-key-wins-even-null": False,
        "number-as-json-text": True, "never-into-arrays": False, "boolean-as-json-text": True,
        "object-as-json-text": True, "all-must-match": False, "missing-arg": False,
        "dollar-at-end-only": False, "status-ok": True, "status-denied": False,
    }
    # unparseable or absent args match nothing, whatever the pattern
    assert passed(result, "missing-arg") == {"paid": False, "garbled": False, "no-args": False}
    assert verdicts(result, "top-level")["garbled"] == (
        False, "yes", '0 matching calls of "pay" (recipient~"^US13"), expected at least 1')
    assert passed(result, "status-ok") == {"paid": True, "garbled": True, "no-args": True}


def test_trace_tool_sequence_subsequence_and_exact(checker):
    def run(name, *tools):
        return ep(name, *calls(*(call(t) for t in tools)))

    checker.ingest(run("in-order", "a", "x", "b", "c"), run("out-of-order", "b", "a", "c"),
                   run("exact", "a", "b", "c"), run("short", "a", "b"),
                   run("long", "a", "b", "c", "d"), run("greedy", "a", "a", "b", "a", "c"),
                   run("none"))
    result = checker.check("""
        - id: c
          assertions:
            - {type: trace_tool_sequence, id: sub, sequence: [a, b, c], allow_other_tools: true}
            - {type: trace_tool_sequence, id: exact, sequence: [a, b, c], allow_other_tools: false}
            - {type: trace_tool_sequence, id: nothing, sequence: [], allow_other_tools: false}
    """)
    assert verdicts(result, "sub") == {
        "in-order": (True, "yes", None),
        "out-of-order": (False, "yes",
                         'no call matches "b" after call_index 1 (matched 1 of 3 in order)'),
        "exact": (True, "yes", None),
        "short": (False, "yes", 'no call matches "c" after call_index 1 (matched 2 of 3 in order)'),
        "long": (True, "yes", None),
        "greedy": (True, "yes", None),
        "none": (False, "yes", 'no call matches "a"'),
    }
    assert verdicts(result, "exact") == {
        "in-order": (False, "yes", 'call_index 1 is "x", expected "b"'),
        "out-of-order": (False, "yes", 'call_index 0 is "b", expected "a"'),
        "exact": (True, "yes", None),
        "short": (False, "yes", 'no call at call_index 2, expected "c"'),
        "long": (False, "yes", 'unexpected call "d" at call_index 3 (expected 3 calls)'),
        "greedy": (False, "yes", 'call_index 1 is "a", expected "b"'),
        "none": (False, "yes", 'no call at call_index 0, expected "a"'),
    }
    assert passed(result, "nothing") == {"in-order": False, "out-of-order": False,
                                         "exact": False, "short": False, "long": False,
                                         "greedy": False, "none": True}


def test_trace_tool_sequence_items_are_matchers(checker):
    checker.ingest(ep("r", *calls(call("pay", {"to": "A"}), call("pay", {"to": "B"}))))
    result = checker.check("""
        - id: c
          assertions:
            - type: trace_tool_sequence
              id: b-then-a
              allow_other_tools: true
              sequence: [{tool: pay, args_match: {to: B}}, {tool: pay, args_match: {to: A}}]
            - type: trace_tool_sequence
              id: a-then-b
              allow_other_tools: false
              sequence: [{tool: pay, args_match: {to: A}}, {tool: pay, args_match: {to: B}}]
    """)
    assert verdicts(result, "b-then-a") == {"r": (
        False, "yes", 'no call matches "pay" (to~"A") after call_index 1 (matched 1 of 2 in order)')}
    assert verdicts(result, "a-then-b") == {"r": (True, "yes", None)}


def test_trace_max_steps_counts_steps_of_kinds(checker):
    checker.ingest(ep("short", {"kind": "user", "text": "hi"}, {"kind": "assistant", "text": "yo"}),
                   ep("long", {"kind": "user", "text": "go"}, *calls(call("a"), call("b"))),
                   ep("empty"))
    result = checker.check("""
        - id: c
          assertions:
            - {type: trace_max_steps, id: all, max: 3}
            - {type: trace_max_steps, id: calls, max: 1, kinds: [tool_call]}
    """)
    assert verdicts(result, "all") == {
        "short": (True, "yes", None),
        "long": (False, "yes", "5 steps, max 3"),
        "empty": (True, "no", "0 steps"),
    }
    assert verdicts(result, "calls") == {
        "short": (True, "no", "0 steps of kind tool_call"),
        "long": (False, "yes", "2 steps of kind tool_call, max 1"),
        "empty": (True, "no", "0 steps of kind tool_call"),
    }


def test_tool_blocklist_substrings_and_exercise(checker):
    checker.ingest(
        ep("blocked-call", *call("db_drop_table"), tools=[{"name": "db_drop_table"}]),
        ep("offered", *call("lookup"), tools=[{"name": "admin_panel"}, {"name": "lookup"}]),
        ep("clean", *call("lookup"), tools=[{"name": "lookup"}]),
        ep("undeclared", *call("lookup")),
        ep("other-case", *call("ADMIN")),
    )
    result = checker.check("""
        - id: c
          assertions:
            - {type: tool_blocklist, id: bl, blocked: [admin, drop_]}
    """)
    assert verdicts(result, "bl") == {
        "blocked-call": (False, "yes", 'called "db_drop_table" at call_index 0 (blocked: "drop_")'),
        "offered": (True, "yes", None),
        "clean": (True, "no", "no blocked tool was offered"),
        "undeclared": (True, "unknown", "the tools offered were not recorded"),
        "other-case": (True, "unknown", "the tools offered were not recorded"),
    }


def test_assay_tool_blocklist_names_exact_tools(checker, tmp_path):
    checker.ingest(ep("exact", *call("admin_delete")), ep("longer", *call("admin_delete_all")))
    path = tmp_path / "eval.yaml"
    path.write_text("version: 1\nsuite: x\ntests:\n  - id: c\n    metric: tool_blocklist\n"
                    "    blocklist: [admin_delete]\n", encoding="utf-8")
    result = evaluate(checker.store.con, load_suite(path))
    assert verdicts(result, "tool_blocklist") == {
        "exact": (False, "yes", 'called "admin_delete" at call_index 0 (blocked: "admin_delete")'),
        "longer": (True, "unknown", "the tools offered were not recorded"),
    }


PAY_SCHEMA = "{type: object, required: [amount], properties: {amount: {type: number, maximum: 1000}}}"


def test_args_valid_with_an_explicit_schema(checker):
    checker.ingest(
        ep("valid", *call("pay", {"amount": 5})),
        ep("too-much", *call("pay", {"amount": 5000})),
        ep("missing", *call("pay", {"note": "x"})),
        ep("no-args", *call("pay")),
        ep("garbled", *call("pay", "{not json")),
        ep("json-string", *call("pay", '{"amount": 7}')),
        ep("second-call", *calls(call("pay", {"amount": 1}), call("pay", {"amount": "2"}))),
        ep("no-call", *call("lookup", {"amount": "x"})),
    )
    result = checker.check(f"""
        - id: c
          assertions:
            - {{type: args_valid, id: av, tool: pay, schema: {PAY_SCHEMA}}}
    """)
    assert verdicts(result, "av") == {
        "valid": (True, "yes", None),
        "too-much": (False, "yes",
                     "call_index 0: args invalid at /amount: fails maximum 1000 (the value is a number)"),
        "missing": (False, "yes", 'call_index 0: args invalid: fails required "amount" '
                                  "(the value is an object of 1 property)"),
        "no-args": (False, "yes", 'call_index 0: args invalid: fails required "amount" '
                                  "(the value is an object of 0 properties)"),
        "garbled": (False, "yes", "call_index 0: args are not valid JSON"),
        "json-string": (True, "yes", None),
        "second-call": (False, "yes",
                        "call_index 1: args invalid at /amount: fails type number "
                        "(the value is a string of 1 character)"),
        "no-call": (True, "no", 'no call of "pay"'),
    }


def test_args_valid_reports_the_first_failing_call_and_never_its_value(checker):
    checker.ingest(
        ep("both-fail", *calls(call("pay", {"amount": 5000}), call("pay", {"amount": "x"}))),
        ep("long", *call("pay", {"amount": "y" * 400})),
    )
    result = checker.check(f"""
        - id: c
          assertions:
            - {{type: args_valid, id: av, tool: pay, schema: {PAY_SCHEMA}}}
    """)
    got = verdicts(result, "av")
    assert got["both-fail"] == (
        False, "yes", "call_index 0: args invalid at /amount: fails maximum 1000 (the value is a number)")
    assert got["long"] == (False, "yes", "call_index 0: args invalid at /amount: fails type number "
                                         "(the value is a string of 400 characters)")


def test_args_valid_treats_format_as_an_annotation(checker):
    checker.ingest(ep("r", *call("book", {"day": "not a date"})))
    result = checker.check("""
        - id: c
          assertions:
            - {type: args_valid, id: av, tool: book, schema: {properties: {day: {format: date}}}}
    """)
    assert verdicts(result, "av") == {"r": (True, "yes", None)}


def test_args_valid_from_definitions(checker):
    def tools(parameters):
        return [{"name": "pay", "parameters": parameters}] if parameters is not None else [
            {"name": "pay"}]

    required = {"type": "object", "required": ["amount"]}
    checker.ingest(
        ep("def-valid", *call("pay", {"amount": 1}), tools=tools(required)),
        ep("def-invalid", *call("pay", {"to": "x"}), tools=tools(required)),
        ep("no-params", *call("pay", {"to": "x"}), tools=tools(None)),
        ep("undeclared", *call("pay", {"to": "x"})),
        ep("bad-schema", *call("pay", {}), tools=tools({"type": 12})),
        ep("remote-ref", *call("pay", {}), tools=tools({"$ref": "https://example.com/s.json"})),
        ep("no-call", tools=tools(required)),
    )
    result = checker.check("""
        - id: c
          assertions:
            - {type: args_valid, id: av, tool: pay, schema: from_definitions}
    """)
    got = verdicts(result, "av")
    assert {run: v[:2] for run, v in got.items()} == {
        "def-valid": (True, "yes"), "def-invalid": (False, "yes"),
        "no-params": (True, "unknown"), "undeclared": (True, "unknown"),
        "bad-schema": (False, "yes"), "remote-ref": (False, "yes"), "no-call": (True, "no"),
    }
    assert got["def-invalid"][2] == ('call_index 0: args invalid: fails required "amount" '
                                     "(the value is an object of 1 property)")
    assert got["no-params"][2] == 'no parameters were recorded for "pay"'
    assert got["no-call"][2] == 'no call of "pay"'
    for run in ("bad-schema", "remote-ref"):
        assert got[run][2].startswith(
            "call_index 0: the recorded parameters are not a valid schema: "), got[run]


def test_tool_status_names_globs_and_star(checker):
    checker.ingest(
        ep("fine", *calls(call("pay"), call("get_a", status="denied"))),
        ep("error", *call("pay", status="error")),
        ep("missing", *call("pay", status=None)),
        ep("nameless", *call(None, status="error")),
        ep("none"),
    )
    result = checker.check("""
        - id: c
          assertions:
            - {type: tool_status, id: default, tool: pay}
            - {type: tool_status, id: glob, tool: "get_*", allow: [ok, denied]}
            - {type: tool_status, id: star, tool: "*"}
    """)
    assert verdicts(result, "default") == {
        "fine": (True, "yes", None),
        "error": (False, "yes", 'call_index 0 ("pay") has status "error", allowed: ok'),
        "missing": (False, "yes", 'call_index 0 ("pay") has status "missing", allowed: ok'),
        "nameless": (True, "no", 'no call matches "pay"'),
        "none": (True, "no", 'no call matches "pay"'),
    }
    assert verdicts(result, "glob") == {
        "fine": (True, "yes", None),
        "error": (True, "no", 'no call matches "get_*"'),
        "missing": (True, "no", 'no call matches "get_*"'),
        "nameless": (True, "no", 'no call matches "get_*"'),
        "none": (True, "no", 'no call matches "get_*"'),
    }
    assert verdicts(result, "star") == {
        "fine": (False, "yes", 'call_index 1 ("get_a") has status "denied", allowed: ok'),
        "error": (False, "yes", 'call_index 0 ("pay") has status "error", allowed: ok'),
        "missing": (False, "yes", 'call_index 0 ("pay") has status "missing", allowed: ok'),
        "nameless": (False, "yes", 'call_index 0 (without a name) has status "error", allowed: ok'),
        "none": (True, "no", 'no call matches "*"'),
    }


def test_output_assertions(checker):
    checker.ingest(ep("hello", output="Hello, Ann"), ep("empty", output=""), ep("none"))
    result = checker.check(r"""
        - id: c
          assertions:
            - {type: output_contains, id: contains, value: Ann}
            - {type: output_contains, id: contains-case, value: hello}
            - {type: output_contains, id: contains-ignore-case, value: hello, ignore_case: true}
            - {type: output_not_contains, id: not-contains, value: Ann}
            - {type: output_matches, id: matches, pattern: "^Hello"}
            - {type: output_not_matches, id: not-matches, pattern: "\\d"}
            - {type: output_not_matches, id: not-matches-fails, pattern: "(?i)ann$"}
    """)
    none = "no final output recorded"
    assert verdicts(result, "contains") == {
        "hello": (True, "yes", None),
        "empty": (False, "yes", 'output does not contain "Ann"'),
        "none": (False, "yes", none),
    }
    assert passed(result, "contains-case") == {"hello": False, "empty": False, "none": False}
    assert passed(result, "contains-ignore-case") == {"hello": True, "empty": False,
                                                      "none": False}
    assert verdicts(result, "not-contains") == {
        "hello": (False, "yes", 'output contains "Ann"'),
        "empty": (True, "yes", None),
        "none": (True, "no", none),
    }
    assert verdicts(result, "matches") == {
        "hello": (True, "yes", None),
        "empty": (False, "yes", 'output does not match "^Hello"'),
        "none": (False, "yes", none),
    }
    assert verdicts(result, "not-matches") == {
        "hello": (True, "yes", None), "empty": (True, "yes", None), "none": (True, "no", none)}
    assert verdicts(result, "not-matches-fails")["hello"] == (
        False, "yes", 'output matches "(?i)ann$"')
