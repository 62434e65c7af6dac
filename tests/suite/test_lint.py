"""The static sweep of suite.md §6: each finding, and the findings as a DataFrame."""
from __future__ import annotations

import polars as pl
import pytest

from tests.suite.suite_helpers import FIXTURES, load
from tracelab.suite import Finding, lint_findings_frame, lint_suite, load_suite


def findings(tmp_path, case_body: str) -> list[tuple[str, str, str]]:
    """(kind, assertion, reason) of every finding for one case `c`."""
    suite = load(tmp_path, "  - id: c\n" + case_body)
    return [(f.kind, f.assertion, f.reason) for f in lint_suite(suite) if f.case == "c"]


def test_a_clean_suite_has_no_findings():
    assert lint_suite(load_suite(FIXTURES / "shift.yaml")) == []


@pytest.mark.parametrize(("body", "expected"), [
    ("    assertions: [{type: trace_must_call_tool, tool: t, min_calls: 0}]\n",
     ("ineffective", "trace_must_call_tool[0]", "min_calls 0 with no max_calls holds for every "
                                                "run")),
    ("    expect: {tools_called: [a, '']}\n",
     ("ineffective", "tools_called[1]", "an empty tool name")),
    ("    expect: {writes_allowed: ['']}\n",
     ("ineffective", "writes_allowed[0]", "an empty tool name")),
    ("    assertions: [{type: trace_must_not_call_tool, tool: ''}]\n",
     ("ineffective", "trace_must_not_call_tool[0]", "an empty tool name (tool)")),
    ("    assertions: [{type: trace_tool_sequence, sequence: [a, {tool: ''}], "
     "allow_other_tools: false}]\n",
     ("ineffective", "trace_tool_sequence[0]", "an empty tool name (sequence[1])")),
    ("    assertions: [{type: sequence_valid, rules: [{type: before, first: a, then: ''}]}]\n",
     ("ineffective", "sequence_valid[0]", "an empty tool name (rules[0].then)")),
    ("    assertions: [{type: tool_status, tool: ''}]\n",
     ("ineffective", "tool_status[0]", "an empty tool name")),
    ("    expect: {must_mention: [hello, '']}\n",
     ("ineffective", "must_mention[1]", "an empty string is mentioned by every run")),
    ("    assertions: [{type: trace_tool_sequence, sequence: [], allow_other_tools: true}]\n",
     ("ineffective", "trace_tool_sequence[0]",
      "sequence: [] with allow_other_tools: true holds for every run")),
    ("    assertions: [{type: tool_blocklist, blocked: []}]\n",
     ("ineffective", "tool_blocklist[0]", "an empty blocked list blocks nothing")),
    ("    assertions: [{type: args_valid, tool: t, schema: {}}]\n",
     ("ineffective", "args_valid[0]", "the schema accepts every value ({} or true)")),
    ("    assertions: [{type: args_valid, tool: t, schema: true}]\n",
     ("ineffective", "args_valid[0]", "the schema accepts every value ({} or true)")),
    ("    assertions: [{type: args_valid, tool: t, schema: {title: T, format: email}}]\n",
     ("ineffective", "args_valid[0]", "the schema accepts every value ({} or true)")),
    ("    expect: {must_not_leak: ['']}\n",
     ("contradictory", "must_not_leak[1]",
      "an empty string occurs in every transcript, so every run leaks it")),
    ("    assertions: [{type: sequence_valid, rules: [{type: after, trigger: a, then: b, "
     "within: 0}]}]\n",
     ("contradictory", "sequence_valid[0]", "rules[0] (after): within 0 is below 1")),
    ("    assertions: [{type: sequence_valid, rules: [{type: require, tool: a}, "
     "{type: eventually, tool: a, within: -2}]}]\n",
     ("contradictory", "sequence_valid[0]", "rules[1] (eventually): within -2 is below 1")),
    ("    expect: {writes: [a, pay], must_not_write: [pay]}\n",
     ("contradictory", "must_not_write[0]", "'pay' is also in writes[1]: it must and must not "
                                            "write")),
    ("    expect: {tools_called: [pay]}\n"
     "    assertions: [{type: trace_must_not_call_tool, tool: pay}]\n",
     ("contradictory", "trace_must_not_call_tool[0]",
      "'pay' is also in tools_called[0]: it must and must not be called")),
    # beyond §6's list, the same two kinds
    ("    assertions: [{type: trace_must_call_tool, tool: t, min_calls: 3, max_calls: 2}]\n",
     ("contradictory", "trace_must_call_tool[0]", "min_calls 3 is above max_calls 2")),
    ("    expect: {termination: []}\n",
     ("contradictory", "termination", "an empty termination list matches no run")),
    ("    assertions: [{type: trace_max_steps, max: 1, kinds: []}]\n",
     ("ineffective", "trace_max_steps[0]", "kinds: [] counts no step")),
    ("    assertions: [{type: sequence_valid, rules: []}]\n",
     ("ineffective", "sequence_valid[0]", "rules: [] holds for every run")),
    ("    assertions: [{type: retrieval_top, ids: []}]\n",
     ("ineffective", "retrieval_top[0]", "ids: [] requires nothing")),
])
def test_each_finding(tmp_path, body, expected):
    assert findings(tmp_path, body) == [expected]


@pytest.mark.parametrize("body", [
    "    assertions: [{type: trace_must_call_tool, tool: t, min_calls: 0, max_calls: 0}]\n",
    "    assertions: [{type: trace_tool_sequence, sequence: [], allow_other_tools: false}]\n",
    "    assertions: [{type: args_valid, tool: t, schema: {type: object}}]\n",
    "    assertions: [{type: sequence_valid, rules: [{type: after, trigger: a, then: b}]}]\n",
    # a narrowed matcher may coexist with tools_called: it forbids only some calls
    "    expect: {tools_called: [pay]}\n"
    "    assertions: [{type: trace_must_not_call_tool, tool: {tool: pay, status: [ok]}}]\n",
    "    expect: {tools_called: [pay]}\n"
    "    assertions: [{type: trace_must_not_call_tool, tool: {tool: pay, "
    "args_match: {to: '^US'}}}]\n",
])
def test_near_misses_are_not_findings(tmp_path, body):
    assert findings(tmp_path, body) == []


def test_empty_schema_behind_a_file_reference(tmp_path):
    (tmp_path / "empty.json").write_text("{}")
    body = "    assertions: [{type: args_valid, tool: t, schema: {$file: empty.json}}]\n"
    assert findings(tmp_path, body) == [
        ("ineffective", "args_valid[0]", "the schema accepts every value ({} or true)")]


def test_findings_from_defaults_are_reported_per_case(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text("suite: d\nmin_cases: 2\ndefaults: {must_not_leak: [x, '']}\n"
                    "cases:\n  - id: a\n  - id: b\n")
    assert lint_suite(load_suite(path)) == [
        Finding("contradictory", "a", "must_not_leak[1]",
                "an empty string occurs in every transcript, so every run leaks it"),
        Finding("contradictory", "b", "must_not_leak[1]",
                "an empty string occurs in every transcript, so every run leaks it"),
    ]


def test_findings_frame(tmp_path):
    suite = load(tmp_path, """
          - id: c
            expect: {must_mention: ['']}
            assertions: [{type: tool_blocklist, blocked: []}]
        """)
    frame = lint_findings_frame(lint_suite(suite))
    assert frame.schema == pl.Schema({"kind": pl.String, "case_id": pl.String,
                                      "assertion_id": pl.String, "reason": pl.String})
    assert frame.rows() == [
        ("ineffective", "c", "must_mention[0]", "an empty string is mentioned by every run"),
        ("ineffective", "c", "tool_blocklist[0]", "an empty blocked list blocks nothing"),
    ]


def test_empty_findings_frame_keeps_its_columns():
    frame = lint_findings_frame([])
    assert frame.columns == ["kind", "case_id", "assertion_id", "reason"]
    assert frame.height == 0
