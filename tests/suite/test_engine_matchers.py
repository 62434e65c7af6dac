"""The matcher extensions of suite.md §8: any_of, several patterns for one argument, tool_glob.

Each is checked through the assertions that accept matchers, with a run that fails, one that
passes, and one that could not have failed (`exercised = no`, where §5 allows it).
"""
from __future__ import annotations

import pytest

from tests.suite.engine_support import Checker, call, calls, ep, verdicts
from tests.suite.suite_helpers import load, refused
from tracelab.suite import ToolMatcher, lint_suite


@pytest.fixture
def checker(store, tmp_path) -> Checker:
    return Checker(store, tmp_path)


def one(checker: Checker, assertion: str):
    return checker.check(f"- id: c\n  assertions:\n    - {{id: a, {assertion}}}\n")


ATTACKER = "evil@attacker.example"
EXFIL = ("type: trace_must_not_call_tool, tool: {any_of: ["
         "{tool: send_email, args_match: {to: attacker}}, "
         "{tool: send_email, args_match: {cc: attacker}}, "
         "{tool: send_email, args_match: {bcc: attacker}}]}")
EXFIL_LABEL = ('any of ["send_email" (to~"attacker"), "send_email" (cc~"attacker"), '
               '"send_email" (bcc~"attacker")]')


def test_any_of_matches_a_call_that_any_branch_matches(checker):
    mail = [{"name": "send_email"}]
    checker.ingest(
        ep("cc", *call("send_email", {"to": "bob@corp.example", "cc": ATTACKER}), tools=mail),
        ep("bcc", *call("send_email", {"to": "bob@corp.example", "bcc": ATTACKER})),
        ep("clean", *call("send_email", {"to": "bob@corp.example"}), tools=mail),
        ep("not-offered", *call("lookup"), tools=[{"name": "lookup"}]),
        ep("unknown", *call("lookup")))
    assert verdicts(one(checker, EXFIL), "a") == {
        "cc": (False, "yes", f"1 matching call of {EXFIL_LABEL}, expected none"),
        "bcc": (False, "yes", f"1 matching call of {EXFIL_LABEL}, expected none"),
        "clean": (True, "yes", None),
        "not-offered": (True, "no", '"send_email" was not offered'),
        "unknown": (True, "unknown", "the tools offered were not recorded"),
    }


def test_any_of_counts_a_call_matched_by_two_branches_once(checker):
    checker.ingest(ep("once", *call("pay", {"to": "x"})), ep("twice", *calls(call("pay"),
                                                                               call("pay"))))
    result = one(checker, "type: trace_must_call_tool, max_calls: 1, "
                          "tool: {any_of: [pay, {tool: pay, status: [ok]}]}")
    assert verdicts(result, "a") == {
        "once": (True, "yes", None),
        "twice": (False, "yes", '2 matching calls of any of ["pay", "pay" (status ok)], '
                                'expected exactly 1'),
    }


def test_any_of_in_sequence_rules(checker):
    checker.ingest(ep("ordered", *calls(call("login_sso"), call("get_data"))),
                   ep("reversed", *calls(call("get_data"), call("login_password"))),
                   ep("no-then", *calls(call("login_sso"))))
    result = checker.check(
        "- id: c\n  assertions:\n    - {id: a, type: sequence_valid, rules: [{type: before, "
        "first: {any_of: [login_sso, login_password]}, then: get_data}]}\n")
    assert verdicts(result, "a") == {
        "ordered": (True, "yes", None),
        "reversed": (False, "yes", 'rules[0] (before): no any of ["login_sso", "login_password"] '
                                   'call before the first "get_data" call (call_index 0)'),
        "no-then": (True, "no", 'rules[0] (before): no call matches "get_data"'),
    }


IBAN = "DE89370400440532013000"
BOTH = f'type: trace_must_not_call_tool, tool: {{tool: send_money, args_match: {{body: ["IBAN", "{IBAN}"]}}}}'


def test_a_pattern_list_needs_every_pattern_to_match_in_any_order(checker):
    money = [{"name": "send_money"}]
    checker.ingest(
        ep("both", *call("send_money", {"body": f"to {IBAN} (an IBAN)"}), tools=money),
        ep("one", *call("send_money", {"body": f"to {IBAN}"}), tools=money),
        ep("not-offered", *call("lookup"), tools=[{"name": "lookup"}]))
    label = f'"send_money" (body~"IBAN", body~"{IBAN}")'
    assert verdicts(one(checker, BOTH), "a") == {
        "both": (False, "yes", f"1 matching call of {label}, expected none"),
        "one": (True, "yes", None),
        "not-offered": (True, "no", '"send_money" was not offered'),
    }


GLOB = 'type: trace_must_not_call_tool, tool: {tool_glob: "update_*", status: [ok]}'


def test_tool_glob_matches_names_and_decides_availability(checker):
    checker.ingest(
        ep("updated", *call("update_roster")),
        ep("failed-update", *call("update_roster", status="error")),
        ep("declared", *call("get_roster"), tools=[{"name": "get_roster"},
                                                   {"name": "update_roster"}]),
        ep("case-differs", *call("Update_roster"), tools=[{"name": "Update_roster"}]),
        ep("unknown", *call("get_roster")))
    label = 'glob "update_*" (status ok)'
    assert verdicts(one(checker, GLOB), "a") == {
        "updated": (False, "yes", f"1 matching call of {label}, expected none"),
        "failed-update": (True, "yes", None),
        "declared": (True, "yes", None),
        "case-differs": (True, "no", 'no tool matching "update_*" was offered'),
        "unknown": (True, "unknown", "the tools offered were not recorded"),
    }


def test_tool_glob_in_a_max_calls_rule_and_a_sequence(checker):
    checker.ingest(ep("three", *calls(call("get_a"), call("get_b"), call("get_c")),
                      tools=[{"name": "get_a"}]),
                   ep("two", *calls(call("get_a"), call("put"), call("get_b"))),
                   ep("none", *calls(call("put")), tools=[{"name": "put"}]))
    result = checker.check(
        "- id: c\n  assertions:\n"
        "    - {id: m, type: sequence_valid, rules: [{type: max_calls, tool: {tool_glob: 'get_?'},"
        " max: 2}]}\n"
        "    - {id: s, type: trace_tool_sequence, allow_other_tools: true,"
        " sequence: [{tool_glob: 'get_*'}, {tool_glob: 'get_*'}]}\n")
    assert verdicts(result, "m") == {
        "three": (False, "yes", 'rules[0] (max_calls): 3 matching calls of glob "get_?", '
                                'expected at most 2'),
        "two": (True, "yes", None),
        "none": (True, "no", 'rules[0] (max_calls): no tool matching "get_?" was offered'),
    }
    assert {run: v[0] for run, v in verdicts(result, "s").items()} == {
        "three": True, "two": True, "none": False}


# --- loading and the static sweep --------------------------------------------------------


def test_the_extensions_load_into_the_model(tmp_path):
    suite = load(tmp_path, """
        - id: c
          assertions:
            - type: trace_must_call_tool
              tool: {any_of: [a, {tool_glob: "b*", args_match: {x: ["1", "2"]}, status: [ok]}]}
        """)
    [assertion] = suite.cases[0].assertions
    assert assertion.matcher == ToolMatcher(any_of=(
        ToolMatcher(tool="a"),
        ToolMatcher(tool_glob="b*", args_match=(("x", "1"), ("x", "2")), status=("ok",))))


@pytest.mark.parametrize(("matcher", "message"), [
    ("{tool: a, tool_glob: 'a*'}",
     ":9: case 'c': key 'assertions[0].tool.tool_glob': give either `tool` (a name) or "
     "`tool_glob` (a glob), not both"),
    ("{any_of: [a, {any_of: [b]}]}",
     ":9: case 'c': key 'assertions[0].tool.any_of[1].any_of': any_of cannot be nested; "
     "list every matcher in the outer any_of"),
    ("{any_of: []}",
     ":9: case 'c': key 'assertions[0].tool.any_of': an empty any_of matches no call; "
     "list at least one matcher"),
    ("{any_of: [a], status: [ok]}",
     ":9: case 'c': key 'assertions[0].tool.status': unknown key in an any_of matcher "
     "(allowed: any_of)"),
    ("{tool: a, args_match: {x: []}}",
     ":9: case 'c': key 'assertions[0].tool.args_match.x': an empty pattern list; give at "
     "least one pattern"),
    ("{tool: a, args_match: {x: ['ok', '(']}}", "key 'assertions[0].tool.args_match.x[1]'"),
    ("{args_match: {x: a}}", "needs the key 'tool'"),
])
def test_extension_mistakes_are_suite_errors(tmp_path, matcher, message):
    assert message in refused(tmp_path, f"""
        - id: c
          assertions:
            - type: trace_must_not_call_tool
              tool: {matcher}
        """)


def test_any_of_is_ineffective_only_when_every_branch_is(tmp_path):
    suite = load(tmp_path, """
        - id: c
          assertions:
            - {type: trace_must_call_tool, id: all-empty, tool: {any_of: ["", {tool_glob: ""}]}}
            - {type: trace_must_call_tool, id: one-empty, tool: {any_of: ["", b]}}
        """)
    assert [(f.assertion, f.kind, f.reason) for f in lint_suite(suite)] == [
        ("all-empty", "ineffective", "every branch of any_of has an empty tool name (tool)")]
