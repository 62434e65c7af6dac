"""sequence_valid and its rules (suite.md §4), one result per entry (§5)."""
from __future__ import annotations

import pytest

from tests.suite.engine_support import Checker, call, calls, ep, verdicts


@pytest.fixture
def checker(store, tmp_path) -> Checker:
    return Checker(store, tmp_path)


def run(name: str, *tools: str, **fields) -> dict:
    return ep(name, *calls(*(call(t) for t in tools)), **fields)


def rule_check(checker: Checker, *rules: str):
    """One sequence_valid entry per rule (ids r0, r1, ...), so each rule's verdict shows."""
    entries = "\n".join(f"    - {{type: sequence_valid, id: r{i}, rules: [{rule}]}}"
                        for i, rule in enumerate(rules))
    return checker.check(f"- id: c\n  assertions:\n{entries}\n")


def test_require(checker):
    checker.ingest(run("has", "x", "login"), run("lacks", "x"))
    result = rule_check(checker, "{type: require, tool: login}")
    assert verdicts(result, "r0") == {
        "has": (True, "yes", None),
        "lacks": (False, "yes",
                  'rules[0] (require): 0 matching calls of "login", expected at least 1'),
    }


def test_before(checker):
    checker.ingest(run("ordered", "login", "get_data", "login"),
                   run("reversed", "get_data", "login"), run("then-only", "x", "get_data"),
                   run("no-then", "login"), run("none"))
    result = rule_check(checker, "{type: before, first: login, then: get_data}")
    assert verdicts(result, "r0") == {
        "ordered": (True, "yes", None),
        "reversed": (False, "yes", 'rules[0] (before): no "login" call before the first '
                                   '"get_data" call (call_index 0)'),
        "then-only": (False, "yes", 'rules[0] (before): no "login" call before the first '
                                    '"get_data" call (call_index 1)'),
        "no-then": (True, "no", 'rules[0] (before): no call matches "get_data"'),
        "none": (True, "no", 'rules[0] (before): no call matches "get_data"'),
    }


def test_after_within(checker):
    checker.ingest(run("answered", "pay", "audit"), run("late", "pay", "x", "audit"),
                   run("second-trigger", "pay", "audit", "pay"), run("no-trigger", "audit"))
    result = rule_check(checker, "{type: after, trigger: pay, then: audit}",
                        "{type: after, trigger: pay, then: audit, within: 2}")
    assert verdicts(result, "r0") == {
        "answered": (True, "yes", None),
        "late": (False, "yes", 'rules[0] (after): "pay" at call_index 0 is not followed by '
                               '"audit" within 1 call'),
        "second-trigger": (False, "yes", 'rules[0] (after): "pay" at call_index 2 is not '
                                         'followed by "audit" within 1 call'),
        "no-trigger": (True, "no", 'rules[0] (after): no call matches "pay"'),
    }
    assert {k: v[0] for k, v in verdicts(result, "r1").items()} == {
        "answered": True, "late": True, "second-trigger": False, "no-trigger": True}


def test_never_after(checker):
    checker.ingest(run("clean", "get_data", "logout"), run("after", "logout", "x", "get_data"),
                   run("no-trigger", "get_data"))
    result = rule_check(checker, "{type: never_after, trigger: logout, forbidden: get_data}")
    assert verdicts(result, "r0") == {
        "clean": (True, "yes", None),
        "after": (False, "yes", 'rules[0] (never_after): "get_data" at call_index 2 comes '
                                'after "logout" at call_index 0'),
        "no-trigger": (True, "no", 'rules[0] (never_after): no call matches "logout"'),
    }


def test_eventually(checker):
    checker.ingest(run("early", "x", "auth"), run("late", "x", "y", "auth"), run("never", "x"))
    result = rule_check(checker, "{type: eventually, tool: auth, within: 2}")
    late = 'rules[0] (eventually): no call among the first 2 matches "auth"'
    assert verdicts(result, "r0") == {
        "early": (True, "yes", None), "late": (False, "yes", late), "never": (False, "yes", late)}


def test_max_calls_exercise_follows_availability(checker):
    checker.ingest(run("two", "retry", "retry", tools=[{"name": "retry"}]),
                   run("three", "retry", "retry", "retry"),
                   run("not-offered", "x", tools=[{"name": "x"}]),
                   run("offered", "x", tools=[{"name": "x"}, {"name": "retry"}]),
                   run("unknown", "x"))
    result = rule_check(checker, "{type: max_calls, tool: retry, max: 2}")
    assert verdicts(result, "r0") == {
        "two": (True, "yes", None),
        "three": (False, "yes", 'rules[0] (max_calls): 3 matching calls of "retry", '
                                'expected at most 2'),
        "not-offered": (True, "no", 'rules[0] (max_calls): "retry" was not offered'),
        "offered": (True, "yes", None),
        "unknown": (True, "unknown", "rules[0] (max_calls): the tools offered were not recorded"),
    }


def test_sequence_subsequence_and_strict(checker):
    checker.ingest(run("between", "a", "x", "b"), run("reversed", "b", "a"),
                   run("only-a", "x", "a"), run("untouched", "x"),
                   run("repeats", "b", "a", "a", "x", "b", "a"), run("adjacent", "b", "a", "b"))
    result = rule_check(checker, "{type: sequence, tools: [a, b]}",
                        "{type: sequence, tools: [a, b], strict: true}")
    untouched = (True, "no", "rules[0] (sequence): no call matches any of its tools")
    assert verdicts(result, "r0") == {
        "between": (True, "yes", None),
        "reversed": (False, "yes", 'rules[0] (sequence): no call matches "b" after call_index 1 '
                                   '(matched 1 of 2 in order)'),
        "only-a": (False, "yes", 'rules[0] (sequence): no call matches "b" after call_index 1 '
                                 '(matched 1 of 2 in order)'),
        "untouched": untouched,
        "repeats": (True, "yes", None),
        "adjacent": (True, "yes", None),
    }
    strict = verdicts(result, "r1")
    assert strict["between"] == (False, "yes", "rules[0] (sequence): its tools never occur as "
                                               "consecutive calls in the listed order")
    assert {k: v[:2] for k, v in strict.items()} == {
        "between": (False, "yes"), "reversed": (False, "yes"), "only-a": (False, "yes"),
        "untouched": (True, "no"), "repeats": (False, "yes"), "adjacent": (True, "yes")}


def test_blocklist_rule_is_a_substring_and_definitions_decide_exercise(checker):
    checker.ingest(run("called", "admin_reset", tools=[{"name": "admin_reset"}]),
                   run("offered", "x", tools=[{"name": "x"}, {"name": "super_admin"}]),
                   run("clean", "x", tools=[{"name": "x"}]),
                   run("undeclared", "x"))
    result = rule_check(checker, "{type: blocklist, pattern: admin}")
    assert verdicts(result, "r0") == {
        "called": (False, "yes", 'rules[0] (blocklist): called "admin_reset" at call_index 0 '
                                 '(blocked: "admin")'),
        "offered": (True, "yes", None),
        "clean": (True, "no", "rules[0] (blocklist): no blocked tool was offered"),
        "undeclared": (True, "unknown", "rules[0] (blocklist): the tools offered were not recorded"),
    }


def test_rules_accept_tool_matchers(checker):
    checker.ingest(ep("r", *calls(call("pay", {"to": "B"}), call("pay", {"to": "A"}))))
    result = rule_check(
        checker,
        "{type: before, first: {tool: pay, args_match: {to: A}}, "
        "then: {tool: pay, args_match: {to: B}}}",
        "{type: before, first: {tool: pay, args_match: {to: B}}, "
        "then: {tool: pay, args_match: {to: A}}}")
    assert verdicts(result, "r0") == {"r": (
        False, "yes", 'rules[0] (before): no "pay" (to~"A") call before the first '
                      '"pay" (to~"B") call (call_index 0)')}
    assert verdicts(result, "r1") == {"r": (True, "yes", None)}


def test_an_entry_combines_its_rules(checker):
    checker.ingest(run("r", "login", "x", tools=[{"name": "login"}, {"name": "x"}]),
                   run("undeclared", "login"))
    result = checker.check("""
        - id: c
          assertions:
            - type: sequence_valid
              id: all-no
              rules:
                - {type: before, first: login, then: get_data}
                - {type: after, trigger: pay, then: audit}
            - type: sequence_valid
              id: one-yes
              rules:
                - {type: before, first: login, then: get_data}
                - {type: require, tool: login}
            - type: sequence_valid
              id: some-unknown
              rules:
                - {type: max_calls, tool: delete, max: 0}
                - {type: before, first: login, then: get_data}
            - type: sequence_valid
              id: failures
              rules:
                - {type: require, tool: logout}
                - {type: require, tool: login}
                - {type: eventually, tool: x, within: 1}
    """)
    assert verdicts(result, "all-no")["r"] == (
        True, "no", 'rules[0] (before): no call matches "get_data"; '
                    'rules[1] (after): no call matches "pay"')
    assert verdicts(result, "one-yes")["r"] == (True, "yes", None)
    assert verdicts(result, "some-unknown") == {
        "r": (True, "no", 'rules[0] (max_calls): "delete" was not offered; '
                          'rules[1] (before): no call matches "get_data"'),
        "undeclared": (True, "unknown",
                       "rules[0] (max_calls): the tools offered were not recorded"),
    }
    assert verdicts(result, "failures")["r"] == (
        False, "yes", 'rules[0] (require): 0 matching calls of "logout", expected at least 1; '
                      'rules[2] (eventually): no call among the first 1 matches "x"')
    # one row per entry and run, never one per rule
    assert result.verdicts.filter(result.verdicts["assertion_type"] == "sequence_valid").height == 8


def test_entries_lint_calls_ineffective_still_yield_a_row_per_run(checker):
    checker.ingest(run("r", "admin"))
    result = checker.check("""
        - id: c
          assertions:
            - {type: sequence_valid, id: no-rules, rules: []}
            - {type: tool_blocklist, id: nothing-blocked, blocked: []}
    """)
    assert verdicts(result, "no-rules") == {"r": (True, "no", "it has no rules")}
    assert verdicts(result, "nothing-blocked") == {
        "r": (True, "unknown", "the tools offered were not recorded")}
