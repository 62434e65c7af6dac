"""Loading tracelab suites: the model built, and every refusal of suite.md §1 and §7."""
from __future__ import annotations

import hashlib
import http.server
import os
import threading
from pathlib import Path

import pytest

from tests.suite.suite_helpers import FIXTURES, HEAD, load, refusal, refused, write
from tracelab.suite import (
    AfterRule,
    ArgsValid,
    BeforeRule,
    BlocklistRule,
    EventuallyRule,
    Expect,
    MaxCallsRule,
    MaxSteps,
    MustCallTool,
    MustNotCallTool,
    NeverAfterRule,
    OutputContains,
    OutputMatches,
    RequireRule,
    Retrieval,
    Select,
    SequenceRule,
    SequenceValid,
    ToolBlocklist,
    ToolMatcher,
    ToolSequence,
    ToolStatus,
    load_suite,
)
from tracelab.suite.expect import EXPECT_KEYS
from tracelab.suite.families import ASSERTION_KEYS
from tracelab.suite.load import CASE_KEYS, TOP_KEYS
from tracelab.suite.rules import RULE_KEYS

# --- the full fixture --------------------------------------------------------------------


@pytest.fixture(scope="module")
def shift():
    return load_suite(FIXTURES / "shift.yaml")


def test_suite_level_keys(shift):
    assert shift.name == "shift-assistant"
    assert shift.kind == "tracelab"
    assert shift.min_cases == 5
    assert shift.tools == (("assign_shift", "write"), ("send_*", "write"))
    assert [c.id for c in shift.cases] == [
        "roster-other-org", "sequences", "retrieval", "null-select", "inline-schema"]
    assert [c.line for c in shift.cases] == [11, 65, 82, 95, 99]


def test_sha256_is_of_the_file_bytes(shift):
    expected = hashlib.sha256((FIXTURES / "shift.yaml").read_bytes()).hexdigest()
    assert shift.sha256 == expected


def test_case_keys_and_select(shift):
    case = shift.cases[0]
    assert case.category == "permissions"
    assert case.min_pass_rate == 0.9
    assert case.allow_no_runs is True
    assert case.select == Select(case_id="roster-other-org", agent="shift-assistant",
                                 agent_version="1.4.*", model="gpt-4o*", tags=("prod",),
                                 where="reward < 1")
    assert shift.cases[1].category is None
    assert shift.cases[1].min_pass_rate == 1.0
    assert shift.cases[1].allow_no_runs is False


def test_select_empty_mapping_selects_every_run_and_null_is_absent(shift):
    by_id = {c.id: c for c in shift.cases}
    assert by_id["retrieval"].select == Select()
    assert by_id["retrieval"].select.where is None
    assert by_id["null-select"].select is None
    assert by_id["sequences"].select is None


def test_expect_with_defaults_merged(shift):
    assert shift.cases[0].expect == Expect(
        termination=("completed",),
        tools_called=("get_roster",),
        must_mention=("other organisations",),
        # defaults first; "Jane Doe" given on both sides is kept once
        must_not_leak=("sk-live-", "Jane Doe", "globex-payroll"),
        confirmations_raised=("assign_shift",),
        writes=("assign_shift",),
        writes_allowed=("send_*",),
        must_not_write=("delete_roster",),
        max_steps=8,
    )
    assert shift.cases[1].expect.termination == ("completed", "refused")
    assert shift.cases[2].expect == Expect(must_not_leak=("sk-live-", "Jane Doe"),
                                           writes_allowed=("send_*",))


def test_every_assertion_type_parsed(shift):
    assert shift.cases[0].assertions == (
        MustCallTool(id="trace_must_call_tool[0]", type="trace_must_call_tool",
                     matcher=ToolMatcher(tool="send_money",
                                         args_match=(("recipient", "^US13"),
                                                     ("amount.value", r"\d+")),
                                         status=("ok",)),
                     min_calls=1, max_calls=2),
        MustNotCallTool(id="no-delete", type="trace_must_not_call_tool",
                        matcher=ToolMatcher(tool="delete_roster")),
        ToolSequence(id="trace_tool_sequence[2]", type="trace_tool_sequence",
                     sequence=(ToolMatcher("get_roster"),
                               ToolMatcher("assign_shift", status=("ok", "denied"))),
                     allow_other_tools=False),
        MaxSteps(id="trace_max_steps[3]", type="trace_max_steps", max=10,
                 kinds=("tool_call", "assistant")),
        ToolBlocklist(id="tool_blocklist[4]", type="tool_blocklist", blocked=("admin_", "debug"),
                      exact=False),
        ArgsValid(id="args_valid[5]", type="args_valid", tool="send_money", schema={
            "type": "object", "required": ["recipient", "amount"],
            "properties": {"recipient": {"type": "string"},
                           "amount": {"type": "number", "minimum": 0}}}),
        ArgsValid(id="args_valid[6]", type="args_valid", tool="assign_shift",
                  schema="from_definitions"),
        ToolStatus(id="tool_status[7]", type="tool_status", tool="*", allow=("ok", "denied")),
        OutputContains(id="output_contains[8]", type="output_contains", value="can't show",
                       ignore_case=True),
        OutputContains(id="output_not_contains[9]", type="output_not_contains", value="Jane",
                       negate=True),
        OutputMatches(id="output_matches[10]", type="output_matches", pattern="(?i)^I can"),
        OutputMatches(id="output_not_matches[11]", type="output_not_matches",
                      pattern=r"\bpassword\b", negate=True),
    )


def test_every_rule_parsed(shift):
    def m(tool, **kw):
        return ToolMatcher(tool, **kw)

    assert shift.cases[1].assertions == (SequenceValid(id="auth-flow", type="sequence_valid", rules=(
        RequireRule("require", m("authenticate")),
        BeforeRule("before", m("authenticate"), m("get_roster")),
        AfterRule("after", m("assign_shift"), m("notify"), within=1),
        AfterRule("after", m("assign_shift"), m("audit"), within=3),
        NeverAfterRule("never_after", m("logout"), m("get_roster", status=("ok",))),
        EventuallyRule("eventually", m("authenticate"), within=2),
        MaxCallsRule("max_calls", m("get_roster"), max=3),
        SequenceRule("sequence", (m("authenticate"), m("get_roster")), strict=False),
        SequenceRule("sequence", (m("a"), m("b")), strict=True),
        BlocklistRule("blocklist", "admin", exact=False),
    )),)


def test_retrieval_assertions_and_k_default(shift):
    assert shift.cases[2].assertions == (
        Retrieval(id="retrieval_reports_omissions[0]", type="retrieval_reports_omissions"),
        Retrieval(id="retrieval_excludes_superseded[1]", type="retrieval_excludes_superseded"),
        Retrieval(id="retrieval_top[2]", type="retrieval_top", ids=("doc-1", 7), k=2),
        Retrieval(id="retrieval_top[3]", type="retrieval_top", ids=("doc-1", "doc-2"), k=5),
        Retrieval(id="retrieval_excludes[4]", type="retrieval_excludes",
                  content_contains="DEPRECATED"),
        Retrieval(id="retrieval_within_budget[5]", type="retrieval_within_budget"),
    )


def test_inline_schema_kept(shift):
    assert shift.cases[4].assertions[0].schema == {
        "type": "object", "required": ["shift_id"],
        "properties": {"shift_id": {"type": "string"}}}


def test_json_tracelab_suite_loads_with_lines(tmp_path):
    path = write(tmp_path, """
        {"suite": "j", "min_cases": 1,
         "cases": [
           {"id": "a", "expect": {"must_not_leak": ["x"]}}
         ]}
        """, "suite.json")
    suite = load_suite(path)
    assert suite.kind == "tracelab"
    assert suite.cases[0].expect.must_not_leak == ("x",)
    assert suite.cases[0].line == 3


# --- §1 refusals -------------------------------------------------------------------------


def test_missing_suite_name(tmp_path):
    path = write(tmp_path, """
        cases: []
        """)
    assert refusal(path) == (f"{path}:1: a suite needs the key 'suite' (its name; `agent` is "
                             "a synonym)")


def test_agent_is_a_synonym_of_suite(tmp_path):
    path = write(tmp_path, HEAD.replace("suite: demo", "agent: demo") + "  - id: a\n")
    assert load_suite(path).name == "demo"


def test_suite_and_agent_together_refused(tmp_path):
    path = write(tmp_path, "agent: x\n" + HEAD + "  - id: a\n")
    assert refusal(path) == (f"{path}:1: key 'agent': give `suite` or its synonym `agent`, "
                             "not both")


def test_fewer_cases_than_default_min_cases(tmp_path):
    path = write(tmp_path, """
        suite: demo
        defaults: {must_not_leak: [x]}
        cases:
          - id: a
          - id: b
          - id: c
          - id: d
        """)
    assert refusal(path) == (f"{path}:3: key 'cases': 4 case(s), fewer than min_cases (5): "
                             "that is an example, not a suite; add cases or lower `min_cases`")


def test_min_cases_lowered(tmp_path):
    assert len(load(tmp_path, "  - id: a\n").cases) == 1


def test_case_without_id(tmp_path):
    message = refused(tmp_path, """
          - category: x
        """)
    assert message.endswith(":6: key 'cases[0]': a case needs the key 'id'")


def test_duplicate_case_id(tmp_path):
    message = refused(tmp_path, """
          - id: a
          - id: b
          - id: a
        """)
    assert message.endswith(":8: case 'a': duplicate case id (first at line 6); ids must be "
                            "unique")


def test_case_without_must_not_leak(tmp_path):
    path = write(tmp_path, """
        suite: demo
        min_cases: 1
        cases:
          - id: lonely
            expect: {must_mention: [hi]}
        """)
    assert refusal(path) == (f"{path}:4: case 'lonely': no must_not_leak: every case must "
                             "name strings that may never appear (in its `expect` or in "
                             "`defaults`)")


def test_must_not_leak_from_case_alone_is_enough(tmp_path):
    path = write(tmp_path, """
        suite: demo
        min_cases: 1
        cases:
          - id: own
            expect: {must_not_leak: [secret]}
        """)
    assert load_suite(path).cases[0].expect.must_not_leak == ("secret",)


def test_empty_must_not_leak_lists_refused(tmp_path):
    path = write(tmp_path, """
        suite: demo
        min_cases: 1
        defaults: {must_not_leak: []}
        cases:
          - id: empty
            expect: {must_not_leak: []}
        """)
    assert "case 'empty': no must_not_leak" in refusal(path)


@pytest.mark.parametrize(("text", "expected"), [
    ("sutie: x\n" + HEAD + "  - id: a\n",
     ":1: key 'sutie': unknown key in the suite; did you mean 'suite'? (allowed: suite, agent, "
     "min_cases, tools, defaults, cases)"),
    (HEAD + "  - id: a\n    expcet: {}\n",
     ":7: case 'a': key 'expcet': unknown key in a case; did you mean 'expect'? (allowed: id, "
     "category, select, min_pass_rate, allow_no_runs, expect, assertions)"),
    (HEAD + "  - id: a\n    select: {agnet: x}\n",
     ":7: case 'a': key 'select.agnet': unknown key in select; did you mean 'agent'? (allowed: "
     "case_id, agent, agent_version, model, tags, where)"),
    (HEAD + "  - id: a\n    expect:\n      must_not_leek: [x]\n",
     ":8: case 'a': key 'expect.must_not_leek': unknown key in expect; did you mean "
     "'must_not_leak'? (allowed: termination, tools_called, must_mention, must_not_leak, "
     "confirmations_raised, writes, writes_allowed, must_not_write, max_steps)"),
    (HEAD.replace("  must_not_leak: [sk-live-]", "  must_not_leak: [x]\n  max_step: 3")
     + "  - id: a\n",
     ":5: key 'defaults.max_step': unknown key in defaults; did you mean 'max_steps'?"),
    (HEAD + "  - id: a\n    assertions:\n      - {type: trace_must_call_tool, tool: t, "
            "min_call: 2}\n",
     ":8: case 'a': key 'assertions[0].min_call': unknown key in a trace_must_call_tool "
     "assertion; did you mean 'min_calls'?"),
    (HEAD + "  - id: a\n    assertions:\n      - type: trace_must_call_tool\n"
            "        tool: {tool: t, args: {x: y}}\n",
     ":9: case 'a': key 'assertions[0].tool.args': unknown key in a tool matcher; did you "
     "mean 'args_match'?"),
    (HEAD + "  - id: a\n    assertions:\n      - type: sequence_valid\n        rules:\n"
            "          - {type: after, trigger: a, then: b, whithin: 2}\n",
     ":10: case 'a': key 'assertions[0].rules[0].whithin': unknown key in a after rule; "
     "did you mean 'within'?"),
])
def test_unknown_keys_refused(tmp_path, text, expected):
    path = write(tmp_path, text)
    message = refusal(path)
    assert message.startswith(str(path))
    assert expected in message


@pytest.mark.parametrize("kind", [
    "trace_must_call_tool", "trace_must_not_call_tool", "trace_tool_sequence", "trace_max_steps",
    "tool_blocklist", "args_valid", "tool_status", "output_contains", "output_not_contains",
    "output_matches", "output_not_matches", "sequence_valid", "retrieval_reports_omissions",
    "retrieval_excludes_superseded", "retrieval_top", "retrieval_excludes",
    "retrieval_within_budget",
])
def test_unknown_key_refused_for_every_assertion_type(tmp_path, kind):
    message = refused(tmp_path, f"""
          - id: a
            assertions:
              - {{type: {kind}, bogus: 1}}
        """)
    assert f"case 'a': key 'assertions[0].bogus': unknown key in a {kind} assertion" in message


@pytest.mark.parametrize("rule", ["require", "before", "after", "never_after", "eventually",
                                  "max_calls", "sequence", "blocklist"])
def test_unknown_key_refused_for_every_rule(tmp_path, rule):
    message = refused(tmp_path, f"""
          - id: a
            assertions:
              - type: sequence_valid
                rules: [{{type: {rule}, bogus: 1}}]
        """)
    assert f"key 'assertions[0].rules[0].bogus': unknown key in a {rule} rule" in message


def test_unknown_assertion_type(tmp_path):
    message = refused(tmp_path, """
          - id: a
            assertions:
              - type: trace_must_cal_tool
        """)
    assert ":8: case 'a': key 'assertions[0].type': unknown assertion type " \
           "'trace_must_cal_tool'; did you mean 'trace_must_call_tool'?" in message


def test_repeated_mapping_key_refused(tmp_path):
    message = refused(tmp_path, """
          - id: a
            expect:
              must_mention: [x]
              must_mention: [y]
        """)
    assert message.endswith(":9: key 'must_mention' repeats the key of line 8; a mapping key "
                            "may appear once")


def test_yaml_syntax_error_names_the_line(tmp_path):
    path = write(tmp_path, "suite: demo\ncases:\n  - id: [a\n")
    assert refusal(path).startswith(f"{path}:4: invalid YAML")


def test_two_yaml_documents_refused(tmp_path):
    path = write(tmp_path, "suite: a\n---\nsuite: b\n")
    assert "invalid YAML" in refusal(path)


def test_top_level_list_refused(tmp_path):
    path = write(tmp_path, "- a\n")
    assert refusal(path) == f"{path}: a suite must be a mapping at the top level, got a list"


def test_missing_file(tmp_path):
    path = tmp_path / "nope.yaml"
    assert refusal(path).startswith(f"{path}: cannot read suite file")


def test_repeated_key_in_json_refused(tmp_path):
    path = write(tmp_path, '{"suite": "a", "suite": "b", "cases": []}', "s.json")
    assert refusal(path) == f"{path}: key 'suite' appears twice in one object"


# --- §7 type rules -----------------------------------------------------------------------


def test_unquoted_no_is_a_boolean_not_a_string(tmp_path):
    message = refused(tmp_path, """
          - id: a
            expect:
              must_not_leak: [NO]
        """)
    assert message.endswith(":8: case 'a': key 'expect.must_not_leak[0]': expected a string, "
                            "got the boolean false (written NO); quote it if you meant the "
                            'string: "NO"')


def test_unquoted_version_is_a_number_not_a_string(tmp_path):
    message = refused(tmp_path, """
          - id: a
            select: {agent_version: 1.10}
        """)
    assert message.endswith(":7: case 'a': key 'select.agent_version': expected a string, got "
                            "the number 1.1 (written 1.10); quote it if you meant the string: "
                            '"1.10"')


@pytest.mark.parametrize(("case", "key", "got"), [
    ("- {id: a, category: yes}", "category", "expected a string, got the boolean true"),
    ("- {id: a, min_pass_rate: high}", "min_pass_rate",
     "expected a number, got the string 'high'"),
    ("- {id: a, allow_no_runs: 1}", "allow_no_runs", "expected true or false, got the number 1"),
    ("- {id: a, expect: {max_steps: 2.5}}", "expect.max_steps",
     "expected an integer, got the number 2.5"),
    ("- {id: a, expect: {max_steps: true}}", "expect.max_steps",
     "expected an integer, got the boolean true"),
    ("- {id: a, expect: {tools_called: get_roster}}", "expect.tools_called",
     "expected a list, got the string 'get_roster'"),
    ("- {id: a, expect: {termination: 2024-01-01}}", "expect.termination",
     "expected a string, got the date 2024-01-01"),
    ("- {id: a, assertions: [{type: trace_must_call_tool, tool: 7}]}", "assertions[0].tool",
     "expected a string, got the number 7"),
    ("- {id: a, assertions: [{type: trace_tool_sequence, sequence: [a], "
     "allow_other_tools: 'no'}]}",
     "assertions[0].allow_other_tools", "expected true or false, got the string 'no'"),
    ("- {id: a, assertions: [{type: trace_must_call_tool, tool: t, min_calls: -1}]}",
     "assertions[0].min_calls", "must be at least 0, got -1"),
    ("- {id: a, tools: {}}", "tools", "unknown key in a case"),
])
def test_type_rules(tmp_path, case, key, got):
    message = refused(tmp_path, "  " + case + "\n")
    assert f":6: case 'a': key '{key}': {got}" in message


def test_a_numeric_case_id_must_be_quoted(tmp_path):
    message = refused(tmp_path, "  - id: 12\n")
    assert message.endswith(":6: key 'cases[0].id': expected a string, got the number 12 "
                            '(written 12); quote it if you meant the string: "12"')


def test_yaml_merge_keys_are_not_repeated_keys(tmp_path):
    suite = load(tmp_path, """
          - id: base
            expect: &leaks {must_not_leak: [a], must_mention: [m]}
          - id: merged
            expect:
              <<: *leaks
              must_mention: [n]
        """)
    assert suite.cases[1].expect.must_mention == ("n",)
    assert suite.cases[1].expect.must_not_leak == ("sk-live-", "a")


def test_min_pass_rate_must_be_a_rate(tmp_path):
    message = refused(tmp_path, """
          - id: a
            min_pass_rate: 1.5
        """)
    assert message.endswith(":7: case 'a': key 'min_pass_rate': must be between 0 and 1, got 1.5")


def test_tool_effect_must_be_read_or_write(tmp_path):
    path = write(tmp_path, "tools: {send_email: delete}\n" + HEAD + "  - id: a\n")
    assert refusal(path) == (f"{path}:1: key 'tools.send_email': an effect is read or write, "
                             "got 'delete'")


def test_trace_max_steps_kinds_must_be_step_kinds(tmp_path):
    message = refused(tmp_path, """
          - id: a
            assertions:
              - {type: trace_max_steps, max: 3, kinds: [tool_call, toolcall]}
        """)
    assert message.endswith(":8: case 'a': key 'assertions[0].kinds[1]': 'toolcall' is not a "
                            "step kind (use system, user, assistant, error, tool_call, tool_result, "
                            "confirmation, budget, retrieval, event)")


def test_tool_status_allow_must_be_statuses(tmp_path):
    message = refused(tmp_path, """
          - id: a
            assertions:
              - {type: tool_status, tool: "*", allow: [ok, failed]}
        """)
    assert message.endswith("key 'assertions[0].allow[1]': 'failed' is not a call status (use "
                            "ok, error, denied, missing)")


def test_matcher_status_must_be_a_non_empty_status_list(tmp_path):
    message = refused(tmp_path, """
          - id: a
            assertions:
              - {type: trace_must_not_call_tool, tool: {tool: t, status: []}}
        """)
    assert "key 'assertions[0].tool.status': an empty status list matches no call" in message


def test_required_assertion_keys(tmp_path):
    message = refused(tmp_path, """
          - id: a
            assertions:
              - {type: trace_tool_sequence, sequence: [a]}
        """)
    assert message.endswith(":8: case 'a': key 'assertions[0]': a trace_tool_sequence "
                            "assertion needs the key 'allow_other_tools'")


def test_eventually_needs_within_but_after_does_not(tmp_path):
    message = refused(tmp_path, """
          - id: a
            assertions:
              - type: sequence_valid
                rules: [{type: after, trigger: a, then: b}, {type: eventually, tool: a}]
        """)
    assert "key 'assertions[0].rules[1]': a eventually rule needs the key 'within'" in message


# --- assertion ids -----------------------------------------------------------------------


def test_ids_default_to_type_and_index(tmp_path):
    suite = load(tmp_path, """
          - id: a
            assertions:
              - {type: output_contains, value: x}
              - {type: output_contains, value: y, id: mine}
              - {type: output_contains, value: z}
        """)
    assert [a.id for a in suite.cases[0].assertions] == [
        "output_contains[0]", "mine", "output_contains[2]"]


def test_explicit_id_colliding_with_a_default_id(tmp_path):
    message = refused(tmp_path, """
          - id: a
            assertions:
              - {type: output_contains, value: x, id: "output_contains[1]"}
              - {type: output_contains, value: y}
        """)
    assert message.endswith(":9: case 'a': key 'assertions[1].type': assertion id "
                            "'output_contains[1]' is already a result id of this case; give a "
                            "unique `id`")


def test_duplicate_explicit_ids(tmp_path):
    message = refused(tmp_path, """
          - id: a
            assertions:
              - {type: output_contains, value: x, id: same}
              - {type: output_contains, value: y, id: same}
        """)
    assert "key 'assertions[1].id': assertion id 'same' is already a result id" in message


@pytest.mark.parametrize("taken", ["termination", "max_steps", "undeclared_writes",
                                   "must_not_leak[0]", "must_mention[1]"])
def test_id_colliding_with_an_expect_result_id(tmp_path, taken):
    message = refused(tmp_path, f"""
          - id: a
            expect: {{must_mention: [x, y]}}
            assertions:
              - {{type: output_contains, value: x, id: "{taken}"}}
        """)
    assert f"assertion id '{taken}' is already a result id of this case" in message


def test_expect_ids_only_reserved_for_items_present(tmp_path):
    suite = load(tmp_path, """
          - id: a
            assertions:
              - {type: output_contains, value: x, id: "must_mention[0]"}
        """)
    assert suite.cases[0].assertions[0].id == "must_mention[0]"


# --- defaults merge (§7) -----------------------------------------------------------------


def test_defaults_lists_concatenated_and_scalars_overridden(tmp_path):
    path = write(tmp_path, """
        suite: demo
        min_cases: 1
        defaults:
          must_not_leak: [a, b, a]
          tools_called: [t1]
          termination: completed
          max_steps: 10
        cases:
          - id: over
            expect:
              must_not_leak: [c, b]
              tools_called: [t1, t2, t2]
              must_mention: [m, m]
              termination: [refused, error]
              max_steps: 3
          - id: inherits
        """)
    over, inherits = load_suite(path).cases
    assert over.expect.must_not_leak == ("a", "b", "c")
    assert over.expect.tools_called == ("t1", "t2")
    assert over.expect.must_mention == ("m",)
    assert over.expect.termination == ("refused", "error")
    assert over.expect.max_steps == 3
    assert inherits.expect == Expect(termination=("completed",), tools_called=("t1",),
                                     must_not_leak=("a", "b"), max_steps=10)


# --- RE2 patterns ------------------------------------------------------------------------


@pytest.mark.parametrize(("assertion", "key", "reason"), [
    ("{type: output_matches, pattern: '(unclosed'}", "assertions[0].pattern",
     "not a valid RE2 pattern: Invalid Input Error: missing ): (unclosed"),
    ("{type: output_not_matches, pattern: '(?<=a)b'}", "assertions[0].pattern",
     "not a valid RE2 pattern: Invalid Input Error: invalid perl operator: (?<"),
    ("{type: trace_must_call_tool, tool: {tool: t, args_match: {to: 'a**'}}}",
     "assertions[0].tool.args_match.to",
     "not a valid RE2 pattern: Invalid Input Error: bad repetition operator: **"),
])
def test_patterns_rejected_by_re2(tmp_path, assertion, key, reason):
    message = refused(tmp_path, f"""
          - id: a
            assertions:
              - {assertion}
        """)
    assert message.endswith(f":8: case 'a': key '{key}': {reason}")


# --- select.where --------------------------------------------------------------------------


def test_where_accepted(tmp_path):
    suite = load(tmp_path, """
          - id: a
            select: {where: "reward < 1 AND list_contains(tags, 'prod')"}
        """)
    assert suite.cases[0].select == Select(where="reward < 1 AND list_contains(tags, 'prod')")


@pytest.mark.parametrize(("where", "reason"), [
    ("1=1; DROP TABLE steps", "must be one boolean expression; a second statement is not allowed"),
    ("episode_id IN (SELECT episode_id FROM episodes)",
     "subqueries are not allowed; use columns of episodes only"),
    ("EXISTS (SELECT 1 FROM steps)", "subqueries are not allowed; use columns of episodes only"),
    ("read_csv('x') IS NULL",
     "read_csv() is a table function; file readers and table functions are not allowed"),
    ("true) UNION SELECT * FROM steps WHERE (1=1",
     "must stay one boolean expression inside WHERE (no UNION, ORDER BY, LIMIT, ...)"),
    ("steps.kind = 'tool_call'",
     "steps.kind is not a column of episodes; a where may use only columns of episodes"),
    ("agent = ?", "parameters ($1, ?) are not allowed"),
    ("reward", "must be a boolean expression, but it is of type DOUBLE"),
    ("rewrad < 1", "does not bind against the episodes table: Binder Error: Referenced column "
                   "\"rewrad\" not found in FROM clause!"),
    ("", "an empty expression; remove `where` or write a condition"),
])
def test_hostile_or_broken_where_refused(tmp_path, where, reason):
    path = write(tmp_path, HEAD + "  - id: a\n    select:\n      where: " + repr(where) + "\n")
    message = refusal(path)
    assert message.startswith(f"{path}:8: case 'a': key 'select.where': {reason}")


# --- $file and schemas --------------------------------------------------------------------


def _args_valid_file(ref: str) -> str:
    return f"""
          - id: a
            assertions:
              - {{type: args_valid, tool: t, schema: {{$file: "{ref}"}}}}
        """


def test_file_reference_absolute_refused(tmp_path):
    (tmp_path / "s.json").write_text("{}")
    message = refused(tmp_path, _args_valid_file(str(tmp_path / "s.json")))
    assert message.endswith(f":8: case 'a': key 'assertions[0].schema.$file': path "
                            f"'{tmp_path / 's.json'}' is absolute; give a path relative to the "
                            "suite's folder")


def test_file_reference_with_dotdot_refused(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "s.json").write_text("{}")
    message = refused(tmp_path, _args_valid_file("sub/../s.json"))
    assert message.endswith("path 'sub/../s.json' contains '..'; keep referenced files inside "
                            "the suite's folder")


def test_file_reference_through_symlink_out_refused(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "schema.json").write_text('{"type": "object"}')
    suite_dir = tmp_path / "suite"
    suite_dir.mkdir()
    os.symlink(outside / "schema.json", suite_dir / "link.json")
    message = refused(suite_dir, _args_valid_file("link.json"))
    assert "path 'link.json' resolves outside the suite's folder" in message


def test_file_reference_missing(tmp_path):
    message = refused(tmp_path, _args_valid_file("schemas/none.json"))
    assert "path 'schemas/none.json' does not exist" in message


def test_file_reference_to_yaml_schema(tmp_path):
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "s.yaml").write_text("type: object\nrequired: [id]\n")
    suite = load(tmp_path, _args_valid_file("schemas/s.yaml"))
    assert suite.cases[0].assertions[0].schema == {"type": "object", "required": ["id"]}


def test_file_reference_with_other_keys_refused(tmp_path):
    message = refused(tmp_path, """
          - id: a
            assertions:
              - {type: args_valid, tool: t, schema: {$file: s.json, type: object}}
        """)
    assert "a {$file: path} reference takes no other keys" in message


def test_invalid_schema_refused(tmp_path):
    message = refused(tmp_path, """
          - id: a
            assertions:
              - {type: args_valid, tool: t, schema: {type: objekt}}
        """)
    assert ":8: case 'a': key 'assertions[0].schema': not a valid JSON Schema (draft 2020-12)" \
           in message


def test_schema_string_other_than_from_definitions_refused(tmp_path):
    message = refused(tmp_path, """
          - id: a
            assertions:
              - {type: args_valid, tool: t, schema: from_definition}
        """)
    assert "expected a schema, {$file: path} or 'from_definitions', got 'from_definition'" \
           in message


class _CountingHandler(http.server.BaseHTTPRequestHandler):
    hits = 0

    def do_GET(self):  # noqa: N802 (http.server's naming)
        type(self).hits += 1
        body = b'{"type": "string"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_remote_ref_is_never_fetched(tmp_path):
    server = http.server.HTTPServer(("127.0.0.1", 0), _CountingHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/schema.json"
        message = refused(tmp_path, f"""
              - id: a
                assertions:
                  - {{type: args_valid, tool: t, schema: {{$ref: "{url}"}}}}
            """)
    finally:
        server.shutdown()
        server.server_close()
    assert _CountingHandler.hits == 0
    assert "key 'assertions[0].schema': not a valid JSON Schema" in message
    assert "remote references are never fetched" in message


# --- args_valid fixtures ------------------------------------------------------------------

_POLICY = "{schema: {type: object, properties: {amount: {type: number, maximum: 1000}}}}"


def test_args_valid_fixture_yields_no_assertion_but_keeps_its_index(tmp_path):
    suite = load(tmp_path, f"""
          - id: a
            assertions:
              - {{type: args_valid, tool: pay, test_args: {{amount: 5}}, policy: {_POLICY}}}
              - {{type: args_valid, tool: pay, test_args: {{amount: 5000}}, policy: {_POLICY},
                  expect: fail}}
              - {{type: output_contains, value: ok}}
        """)
    assert suite.cases[0].assertions == (
        OutputContains(id="output_contains[2]", type="output_contains", value="ok"),)


def test_args_valid_fixture_not_meeting_its_expect_names_the_case(tmp_path):
    message = refused(tmp_path, f"""
          - id: pay-limits
            assertions:
              - {{type: args_valid, tool: pay, test_args: {{amount: 5000}}, policy: {_POLICY},
                  expect: pass}}
        """)
    assert message.endswith(":8: case 'pay-limits': key 'assertions[0]': fixture expects pass, "
                            "but test_args against policy.schema fails")


def test_args_valid_fixture_with_schema_key_refused(tmp_path):
    message = refused(tmp_path, f"""
          - id: a
            assertions:
              - {{type: args_valid, tool: pay, schema: {{}}, test_args: {{}}, policy: {_POLICY}}}
        """)
    assert "give either `schema` or the fixture keys (test_args, policy, expect), not both" \
           in message


def test_lint_is_not_load(tmp_path):
    """Ineffective assertions still load: refusing them is check's job (with lint)."""
    suite = load(tmp_path, """
          - id: a
            expect: {must_mention: [""]}
            assertions:
              - {type: tool_blocklist, blocked: []}
              - {type: args_valid, tool: t, schema: {}}
        """)
    assert suite.cases[0].expect.must_mention == ("",)
    assert len(suite.cases[0].assertions) == 2


def test_path_shown_as_given(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "suite: demo\n")
    assert refusal(Path("suite.yaml")).startswith("suite.yaml:1: the suite needs the key 'cases'")


def test_every_key_is_documented():
    docs = (Path(__file__).resolve().parents[2] / "docs" / "suites.md").read_text()
    keys = {*TOP_KEYS, *CASE_KEYS, *EXPECT_KEYS, *ASSERTION_KEYS, *RULE_KEYS, "args_match",
            "status", "case_id", "agent_version", "model", "tags", "where"}
    keys.update(k for group in (*ASSERTION_KEYS.values(), *RULE_KEYS.values()) for k in group)
    assert sorted(k for k in keys if f"`{k}`" not in docs) == []
