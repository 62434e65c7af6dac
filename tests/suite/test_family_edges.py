"""Every assertion family alone in a suite, with each edge value the contract allows (suite.md §3, §4,
§8): the check runs (no store error, no traceback) and gives the verdict the contract says, for a
run with no call and no output and for a run with one call and an output."""
from __future__ import annotations

import pytest

from tests.suite.engine_support import Checker, call, ep, verdicts
from tracelab.errors import SuiteError
from tracelab.suite import load_suite
from tracelab.suite.families import FAMILIES

# (assertion YAML, expected passed for the run "empty" and for the run "called")
EDGES: list[tuple[str, tuple[bool, bool]]] = [
    ("{type: trace_must_call_tool, tool: get_roster, min_calls: 0, max_calls: 0}", (True, False)),
    ("{type: trace_must_call_tool, tool: get_roster, min_calls: 0}", (True, True)),
    ("{type: trace_must_call_tool, tool: {tool_glob: '*'}}", (False, True)),
    ("{type: trace_must_call_tool, tool: {any_of: [nope, get_roster]}}", (False, True)),
    ("{type: trace_must_not_call_tool, tool: {tool_glob: '*'}}", (True, False)),
    ("{type: trace_must_not_call_tool, tool: {tool: get_roster, status: [missing]}}", (True, True)),
    ("{type: trace_tool_sequence, sequence: [], allow_other_tools: false}", (True, False)),
    ("{type: trace_tool_sequence, sequence: [], allow_other_tools: true}", (True, True)),
    ("{type: trace_tool_sequence, sequence: [get_roster], allow_other_tools: false}", (False, True)),
    ("{type: trace_tool_sequence, sequence: [{tool_glob: '*'}], allow_other_tools: true}", (False, True)),
    ("{type: trace_max_steps, max: 0}", (True, False)),
    ("{type: trace_max_steps, max: 0, kinds: []}", (True, True)),
    ("{type: trace_max_steps, max: 0, kinds: [retrieval]}", (True, True)),
    ("{type: tool_blocklist, blocked: []}", (True, True)),
    ("{type: tool_blocklist, blocked: ['']}", (True, False)),
    ("{type: tool_blocklist, blocked: [roster]}", (True, False)),
    ("{type: args_valid, tool: get_roster, schema: {}}", (True, True)),
    ("{type: args_valid, tool: get_roster, schema: true}", (True, True)),
    ("{type: args_valid, tool: get_roster, schema: false}", (True, False)),
    ("{type: args_valid, tool: get_roster, schema: from_definitions}", (True, True)),
    ("{type: tool_status, tool: '*'}", (True, True)),
    ("{type: tool_status, tool: '*', allow: [error]}", (True, False)),
    ("{type: tool_status, tool: 'get_*', allow: [ok, error, denied, missing]}", (True, True)),
    ("{type: output_contains, value: ''}", (False, True)),
    ("{type: output_contains, value: DONE, ignore_case: true}", (False, True)),
    ("{type: output_not_contains, value: ''}", (True, False)),
    ("{type: output_matches, pattern: ''}", (False, True)),
    ("{type: output_not_matches, pattern: ''}", (True, False)),
    ("{type: output_not_matches, pattern: '^$'}", (True, True)),
    ("{type: sequence_valid, rules: []}", (True, True)),
    ("{type: sequence_valid, rules: [{type: require, tool: {any_of: [get_roster]}}]}", (False, True)),
    ("{type: sequence_valid, rules: [{type: before, first: get_roster, then: get_roster}]}", (True, False)),
    ("{type: sequence_valid, rules: [{type: after, trigger: get_roster, then: x, within: 1}]}", (True, False)),
    ("{type: sequence_valid, rules: [{type: never_after, trigger: get_roster, forbidden: get_roster}]}",
     (True, True)),
    ("{type: sequence_valid, rules: [{type: eventually, tool: get_roster, within: 1}]}", (False, True)),
    ("{type: sequence_valid, rules: [{type: max_calls, tool: get_roster, max: 0}]}", (True, False)),
    ("{type: sequence_valid, rules: [{type: sequence, tools: [], strict: true}]}", (True, True)),
    ("{type: sequence_valid, rules: [{type: sequence, tools: [get_roster, x]}]}", (True, False)),
    ("{type: sequence_valid, rules: [{type: blocklist, pattern: ''}]}", (True, False)),
    ("{type: retrieval_reports_omissions}", (True, True)),
    ("{type: retrieval_excludes_superseded}", (True, True)),
    ("{type: retrieval_top, ids: []}", (True, True)),
    ("{type: retrieval_top, ids: [1, 'a'], k: 0}", (True, True)),
    ("{type: retrieval_excludes, content_contains: ''}", (True, True)),
    ("{type: retrieval_within_budget}", (True, True)),
]


@pytest.fixture(scope="module")
def checker(tmp_path_factory) -> Checker:
    from tracelab.store import open_store

    folder = tmp_path_factory.mktemp("edges")
    store = open_store(folder / "s.duckdb")
    checker = Checker(store, folder)
    checker.ingest(ep("empty"),
                   ep("called", *call("get_roster", {"id": "1"}), output="done",
                      tools=[{"name": "get_roster", "parameters": {"type": "object"}}]))
    yield checker
    store.close()


def test_every_family_has_an_edge_case():
    covered = {entry.split("type: ", 1)[1].split(",")[0].split("}")[0] for entry, _ in EDGES}
    assert covered == set(FAMILIES)


@pytest.mark.parametrize(("entry", "expected"), EDGES, ids=[entry for entry, _ in EDGES])
def test_one_family_alone_with_an_edge_value(checker, entry, expected):
    result = checker.check(f"""
        - id: c
          assertions:
            - {entry.replace("{type", "{id: a, type", 1)}
    """)
    got = verdicts(result, "a")
    assert set(got) == {"empty", "called"}
    assert (got["empty"][0], got["called"][0]) == expected, got
    for passed, exercised, _reason in got.values():
        assert exercised == "yes" or passed  # a failure is always exercised (suite.md §5)


def test_any_of_in_a_trace_tool_sequence_is_a_suite_error(checker):
    path = checker.suite_path("""
        - id: c
          assertions:
            - {type: trace_tool_sequence, allow_other_tools: true,
               sequence: [get_roster, {any_of: [a, b]}]}
    """)
    with pytest.raises(SuiteError, match=r"key 'assertions\[0\]\.sequence\[1\]': any_of is not accepted"):
        load_suite(path)


def test_any_of_in_a_trace_tool_sequence_exits_2(checker, tmp_path):
    from tests.reliability.support import run_cli

    path = checker.suite_path("""
        - id: c
          assertions:
            - {type: trace_tool_sequence, allow_other_tools: false, sequence: [{any_of: [a]}]}
    """)
    code, _out, err = run_cli("check", str(path), "--store", str(checker.store.path))
    assert code == 2, err
    assert "any_of is not accepted in a trace_tool_sequence" in err
