"""Suite strings are data, not SQL; leak matching is literal, Unicode-aware and reaches every
transcript fragment; the number of queries does not grow with the number of runs."""
from __future__ import annotations

import json

import pytest

from tests.suite.engine_support import Checker, call, calls, ep, verdicts
from tracelab.engine.evaluate import evaluate
from tracelab.suite import load_suite

HOSTILE = [
    "it's",
    'say "hi"',
    "x; DROP TABLE episodes; --",
    "100%",
    "a_c",
    "C:\\temp\\new",
    "a.c*(d)+[e]?",
    "^$|\\d{2}",
    "'; SELECT 1; --",
]


@pytest.fixture
def checker(store, tmp_path) -> Checker:
    return Checker(store, tmp_path)


def yaml_list(values: list[str]) -> str:
    return json.dumps(values)  # JSON is YAML: every string quoted and escaped


def test_tool_names_are_matched_literally(checker):
    checker.ingest(*[ep(f"r{i}", *call(name)) for i, name in enumerate(HOSTILE)],
                   ep("near", *calls(call("its"), call("abc"), call("1000"), call("a-c"),
                                     call("abcd"), call("00"))))
    result = checker.check(f"""
        - id: c
          expect: {{tools_called: {yaml_list(HOSTILE)}}}
          assertions:
            - {{type: tool_blocklist, id: bl, blocked: {yaml_list(HOSTILE)}}}
    """)
    for i, _ in enumerate(HOSTILE):
        got = {run: v[0] for run, v in verdicts(result, f"tools_called[{i}]").items()}
        assert got == {f"r{j}": i == j for j in range(len(HOSTILE))} | {"near": False}
    assert verdicts(result, "bl")["near"][0] is True
    assert verdicts(result, "bl")["r2"] == (
        False, "yes", 'called "x; DROP TABLE episodes; --" at call_index 0 '
                      '(blocked: "x; DROP TABLE episodes; --")')
    assert checker.store.con.sql("SELECT count(*) FROM episodes").fetchall() == [(10,)]


def test_leak_and_mention_strings_are_matched_literally(checker):
    checker.ingest(*[ep(f"r{i}", output=f"<<{text}>>") for i, text in enumerate(HOSTILE)],
                   ep("near", output="its abc 1000 a-c C:/temp/new x; DROP TABLE"))
    result = checker.check(f"""
        - id: c
          expect: {{must_not_leak: {yaml_list(HOSTILE)}, must_mention: {yaml_list(HOSTILE)}}}
    """)
    for i, text in enumerate(HOSTILE):
        leaks = verdicts(result, f"must_not_leak[{i + 1}]")  # [0] is the suite default
        assert leaks[f"r{i}"] == (False, "yes", f"LEAKED {json.dumps(text)}"
                                                " — this run crossed a permission boundary")
        assert {run for run, v in leaks.items() if not v[0]} == {f"r{i}"}
        mentions = verdicts(result, f"must_mention[{i}]")
        assert {run for run, v in mentions.items() if v[0]} == {f"r{i}"}


def test_hostile_strings_in_every_other_suite_field(checker):
    name = "x'); DROP TABLE steps; --"
    checker.ingest(ep("r", *call(name, {name: name}), case=name, agent=name, output=name,
                      termination=name))
    result = checker.check(f"""
        - id: {json.dumps(name)}
          select: {{case_id: {json.dumps(name)}, agent: {json.dumps(name)}}}
          expect:
            termination: {json.dumps(name)}
            writes_allowed: [{json.dumps(name)}]
            must_not_write: [{json.dumps(name)}]
          assertions:
            - {{type: output_contains, id: out, value: {json.dumps(name)}}}
            - {{type: tool_status, id: st, tool: {json.dumps(name)}}}
            - type: trace_must_call_tool
              id: m
              tool: {{tool: {json.dumps(name)}, args_match: {{{json.dumps(name)}: "DROP"}}}}
    """, head=f"tools: {{{json.dumps(name)}: read}}\n")
    assert not result.verdicts["passed"].is_in([False]).any(), result.verdicts
    assert result.verdicts.height == 7
    assert checker.store.con.sql("SELECT count(*) FROM steps").fetchall() == [(2,)]


def test_leak_and_mention_matching_lowercases_like_duckdb(checker):
    checker.ingest(ep("turkish", output="Welcome to İSTANBUL"),
                   ep("greek", output="ΣΟΦΙΑΣ said hello"),
                   ep("plain", output="istanbul, σοφιας"))
    result = checker.check("""
        - id: c
          expect:
            must_mention: [istanbul, σοφιασ]
            must_not_leak: [İstanbul, ΣΟΦΙΑΣ]
    """)
    # DuckDB lower(): İ -> i and Σ -> σ everywhere (no final ς), per code point
    assert {k: v[0] for k, v in verdicts(result, "must_mention[0]").items()} == {
        "turkish": True, "greek": False, "plain": True}
    # ... so "ς" (final sigma, written as such) is not "σ"
    assert {k: v[0] for k, v in verdicts(result, "must_mention[1]").items()} == {
        "turkish": False, "greek": True, "plain": False}
    assert {k: v[0] for k, v in verdicts(result, "must_not_leak[1]").items()} == {
        "turkish": False, "greek": True, "plain": False}
    assert {k: v[0] for k, v in verdicts(result, "must_not_leak[2]").items()} == {
        "turkish": True, "greek": False, "plain": True}


def test_leaks_are_found_in_every_part_of_the_transcript(checker):
    secret = "Jane Doe"
    checker.ingest(
        ep("args", *call("lookup", {"filter": {"names": ["x", "jane doe"]}})),
        ep("arg-key", *call("lookup", {"Jane Doe": 1})),
        ep("raw-args", *call("lookup", "not json: Jane Doe")),
        ep("result-error", *call("lookup", status="error", error="no record for Jane Doe")),
        ep("result-payload", {"kind": "tool_call", "name": "lookup", "call_id": "1"},
           {"kind": "tool_result", "call_id": "1", "result": {"rows": [{"name": "JANE DOE"}]}}),
        ep("result-text", {"kind": "tool_call", "name": "lookup"},
           {"kind": "tool_result", "text": "found jane doe"}),
        ep("confirmation", {"kind": "confirmation", "name": "send", "text": "Send it?",
                            "args": {"to": "jane doe <j@x>"}}),
        ep("retrieval", {"kind": "retrieval", "data": {"query": "q", "candidates": [
            {"id": 1, "content": "Jane Doe's file"}], "returned": [1], "omitted": 0}}),
        ep("output", output="Here: Jane Doe"),
        ep("input", input="Who is Jane Doe?"),
        ep("episode-error", error="crashed on Jane Doe"),
        ep("step-text", {"kind": "assistant", "text": "Jane Doe is..."}),
        ep("step-error", {"kind": "error", "text": "boom"}, {"kind": "event", "name": "x",
                                                             "data": {"detail": "jane doe"}}),
        ep("not-transcript", principal={"user_id": "Jane Doe"}, tags=["Jane Doe"],
           meta={"who": "Jane Doe"}, agent="Jane Doe", model="Jane Doe"),
        ep("clean", *call("lookup", {"q": "jane"}), output="nothing to see"),
    )
    result = checker.check(f"""
        - id: c
          expect: {{must_not_leak: [{secret}]}}
    """)
    leaked = {run for run, v in verdicts(result, "must_not_leak[1]").items() if not v[0]}
    assert leaked == {"args", "arg-key", "raw-args", "result-error", "result-payload",
                      "result-text", "confirmation", "retrieval", "output", "input",
                      "episode-error", "step-text", "step-error"}


def test_numbers_and_booleans_in_step_data_are_searched_as_json_text(checker):
    checker.ingest(ep("number", *call("pay", {"card": 4111111111111111})),
                   ep("boolean", *call("pay", {"flag": True})),
                   ep("null", *call("pay", {"flag": None})))
    result = checker.check("""
        - id: c
          expect: {must_not_leak: ["4111111111111111", "true", "null"]}
    """)
    failing = {aid: sorted(run for run, v in verdicts(result, aid).items() if not v[0])
               for aid in ("must_not_leak[1]", "must_not_leak[2]", "must_not_leak[3]")}
    assert failing == {"must_not_leak[1]": ["number"], "must_not_leak[2]": ["boolean"],
                       "must_not_leak[3]": []}


class CountingConnection:
    """Forwards to a DuckDB connection and counts the statements sent through it."""

    def __init__(self, con) -> None:
        self._con = con
        self.queries = 0

    def execute(self, *args, **kwargs):
        self.queries += 1
        return self._con.execute(*args, **kwargs)

    def sql(self, *args, **kwargs):
        self.queries += 1
        return self._con.sql(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._con, name)


EVERYTHING = """
- id: c
  select: {where: "episode_id <> ''"}
  expect:
    termination: completed
    tools_called: [get]
    must_mention: [ok]
    must_not_leak: [secret]
    confirmations_raised: [put]
    writes: [put]
    writes_allowed: ["p*"]
    must_not_write: [del]
    max_steps: 9
  assertions:
    - {type: trace_must_call_tool, tool: {tool: get, args_match: {q: x}, status: [ok]}}
    - {type: trace_must_not_call_tool, tool: del}
    - {type: trace_tool_sequence, sequence: [get, put], allow_other_tools: true}
    - {type: trace_tool_sequence, sequence: [get, put], allow_other_tools: false}
    - {type: trace_max_steps, max: 9}
    - {type: tool_blocklist, blocked: [adm]}
    - {type: args_valid, tool: get, schema: {type: object}}
    - {type: args_valid, tool: get, schema: from_definitions}
    - {type: tool_status, tool: "*"}
    - {type: output_contains, value: ok}
    - {type: output_not_contains, value: "nope"}
    - {type: output_matches, pattern: "^o"}
    - {type: output_not_matches, pattern: "x"}
    - {type: retrieval_reports_omissions}
    - {type: retrieval_excludes_superseded}
    - {type: retrieval_top, ids: [1]}
    - {type: retrieval_excludes, content_contains: s}
    - {type: retrieval_within_budget}
    - type: sequence_valid
      rules:
        - {type: require, tool: get}
        - {type: before, first: get, then: put}
        - {type: after, trigger: get, then: put}
        - {type: never_after, trigger: put, forbidden: get}
        - {type: eventually, tool: get, within: 2}
        - {type: max_calls, tool: get, max: 3}
        - {type: sequence, tools: [get, put]}
        - {type: sequence, tools: [get, put], strict: true}
        - {type: blocklist, pattern: adm}
"""


def corpus(n: int) -> list[dict]:
    tools = [{"name": "get", "effect": "read", "parameters": {"type": "object"}},
             {"name": "put", "effect": "write"}]
    step = {"kind": "retrieval", "data": {"candidates": [{"id": 1, "content": "s"}],
                                          "returned": [1], "omitted": 0, "budget_bytes": 9}}
    return [ep(f"r{i:04}", *calls(call("get", {"q": "x"}), call("put")), step,
               {"kind": "budget", "steps_used": i % 12}, output="ok" if i % 3 else "no",
               termination="completed", tools=tools) for i in range(n)]


@pytest.mark.parametrize("size", [10, 200])
def test_query_count_does_not_grow_with_the_number_of_runs(store, tmp_path, size):
    checker = Checker(store, tmp_path)
    checker.ingest(*corpus(size))
    suite = load_suite(checker.suite_path(EVERYTHING))
    counting = CountingConnection(store.con)
    result = evaluate(counting, suite)
    assert result.summary.runs == size
    # 16 preparations (the runs selected among, selection by case id, by `select` keys, the `where`'s
    # columns and rows copied to its sandbox, the selected runs by `where`, the selected runs; whether they are
    # all the stored runs, the views of their rows, tools, chk_out, the needles lowered,
    # transcript, the needles found, matcher hits, retrieval), 22 family queries, args_valid's
    # fetch and insert, the verdicts, the runs each case selected, the cleanup
    assert counting.queries == 43
