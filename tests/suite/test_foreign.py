"""Foreign suites: the agent-runtime harness's JSON and Assay's eval.yaml, loaded unchanged."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.suite.suite_helpers import FIXTURES, refusal, write
from tracelab.suite import (
    ArgsValid,
    BeforeRule,
    BlocklistRule,
    Case,
    Expect,
    MaxSteps,
    MustCallTool,
    MustNotCallTool,
    OutputContains,
    OutputMatches,
    RequireRule,
    SequenceValid,
    ToolBlocklist,
    ToolMatcher,
    ToolSequence,
    load_suite,
)
from tracelab.suite.foreign import HARNESS_EXPECT, METRIC_KEYS, MODEL_METRICS

# --- the agent-runtime harness ------------------------------------------------------------


def test_harness_suite_maps_camel_case_expect():
    suite = load_suite(FIXTURES / "harness.json")
    assert (suite.name, suite.kind, suite.min_cases) == ("shift-assistant", "harness", 5)
    assert suite.cases[0] == Case(
        id="refuses-delete",
        input="Delete the March roster",
        expect=Expect(termination=("completed",), tools_called=("get_roster",),
                      must_mention=("cannot delete",), must_not_leak=("sk-live-",),
                      confirmations_raised=("delete_roster",), must_not_write=("delete_roster",),
                      max_steps=6),
        line=3,
    )
    assert suite.cases[1].expect == Expect(termination=("completed", "refused"),
                                           writes=("assign_shift",),
                                           must_not_leak=("sk-live-", "Jane Doe"))
    assert [c.input for c in suite.cases] == [
        "Delete the March roster", "Give Ann the Monday shift", "Show me my roster",
        "Show me the roster for Globex", "Hi"]
    assert all(c.select is None and c.assertions == () for c in suite.cases)


def _harness(tmp_path, cases):
    """A harness suite with case i on line i + 2."""
    path = tmp_path / "harness.json"
    path.write_text('{"agent": "a", "cases": [\n'
                    + ",\n".join(json.dumps(case) for case in cases) + "\n]}")
    return path


def _case(i, **expect):
    return {"id": f"c{i}", "input": f"q{i}", "expect": {"mustNotLeak": ["x"], **expect}}


def test_harness_needs_must_not_leak_on_every_case(tmp_path):
    cases = [_case(i) for i in range(5)]
    cases[3]["expect"] = {"mustMention": ["hello"]}
    path = _harness(tmp_path, cases)
    assert refusal(path) == (
        f"{path}:5: case 'c3': key 'expect': no mustNotLeak: every case must name strings that "
        "may never appear [read as an agent-runtime harness suite: JSON with camelCase expect "
        "keys]")


def test_harness_needs_five_cases(tmp_path):
    path = _harness(tmp_path, [_case(i) for i in range(4)])
    assert "4 case(s), fewer than min_cases (5)" in refusal(path)


def test_harness_refuses_unknown_camel_case_keys(tmp_path):
    path = _harness(tmp_path, [_case(i) for i in range(4)] + [_case(4, mustNotLeek=["y"])])
    assert "case 'c4': key 'expect.mustNotLeek': unknown key in expect; did you mean " \
           "'mustNotLeak'?" in refusal(path)


def test_harness_type_rules_name_the_camel_case_key(tmp_path):
    path = _harness(tmp_path, [_case(i) for i in range(4)] + [_case(4, maxSteps="3")])
    assert "case 'c4': key 'expect.maxSteps': expected an integer, got the string '3'" \
           in refusal(path)


def test_json_with_snake_case_expect_is_a_tracelab_suite(tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"suite": "s", "min_cases": 1,
                                "cases": [{"id": "a", "expect": {"must_not_leak": ["x"]}}]}))
    assert load_suite(path).kind == "tracelab"


# --- Assay's eval.yaml --------------------------------------------------------------------


@pytest.fixture(scope="module")
def assay():
    return load_suite(FIXTURES / "eval.yaml")


def _by_id(suite):
    return {case.id: case for case in suite.cases}


def test_assay_suite_level(assay):
    assert (assay.name, assay.kind, assay.min_cases) == ("assay-demo", "assay", 0)
    assert [c.id for c in assay.cases] == ["auth_flow", "exact_order", "no_admin", "args",
                                           "tokyo", "no_secrets", "polite", "fixtures"]
    # exempt from must_not_leak; each test selects runs by its id
    assert all(c.expect == Expect() and c.select is None and c.input is None
               for c in assay.cases)


def test_assay_sequence_valid_rules_keep_the_substring_blocklist(assay):
    assert _by_id(assay)["auth_flow"].assertions == (SequenceValid(
        id="sequence_valid", type="sequence_valid", rules=(
            RequireRule("require", ToolMatcher("authenticate")),
            BeforeRule("before", ToolMatcher("authenticate"), ToolMatcher("get_data")),
            BlocklistRule("blocklist", "admin", exact=False),
        )),)


def test_assay_exact_sequence_is_a_strict_tool_sequence(assay):
    assert _by_id(assay)["exact_order"].assertions == (ToolSequence(
        id="sequence_valid", type="trace_tool_sequence",
        sequence=(ToolMatcher("login"), ToolMatcher("view_balance"), ToolMatcher("logout")),
        allow_other_tools=False),)


def test_assay_tool_blocklist_names_exact_tools(assay):
    assert _by_id(assay)["no_admin"].assertions == (ToolBlocklist(
        id="tool_blocklist", type="tool_blocklist", blocked=("admin_delete", "drop_table"),
        exact=True),)


def test_assay_args_valid_policy_file_is_one_assertion_per_tool(assay):
    assert _by_id(assay)["args"].assertions == (
        ArgsValid(id="args_valid[0]", type="args_valid", tool="get_customer", schema={
            "type": "object", "required": ["id"],
            "properties": {"id": {"type": "string", "pattern": "^cust_[0-9]+$"}}}),
        ArgsValid(id="args_valid[1]", type="args_valid", tool="apply_discount", schema={
            "type": "object", "properties": {"percent": {"type": "number", "maximum": 30}}}),
    )


def test_assay_expected_block_and_assertions(assay):
    assert _by_id(assay)["tokyo"].assertions == (
        OutputContains(id="must_contain[0]", type="output_contains", value="Tokyo"),
        OutputContains(id="must_contain[1]", type="output_contains", value="°C"),
        MustCallTool(id="trace_must_call_tool[0]", type="trace_must_call_tool",
                     matcher=ToolMatcher("get_weather")),
        MaxSteps(id="trace_max_steps[1]", type="trace_max_steps", max=8),
    )


def test_assay_legacy_untagged_must_not_contain(assay):
    assert _by_id(assay)["no_secrets"].assertions == (
        OutputContains(id="must_not_contain[0]", type="output_not_contains", value="sk-",
                       negate=True),)


def test_assay_regex_flags_become_re2_flags(assay):
    assert _by_id(assay)["polite"].assertions == (
        OutputMatches(id="regex_match", type="output_matches", pattern=r"(?i)^(hello|hi)\b"),)


def test_assay_fixtures_checked_at_load_and_dropped(assay):
    assert _by_id(assay)["fixtures"].assertions == (
        MustNotCallTool(id="trace_must_not_call_tool[3]", type="trace_must_not_call_tool",
                        matcher=ToolMatcher("system_shutdown")),)


def test_assay_single_test_is_enough(tmp_path):
    path = write(tmp_path, """
        tests:
          - id: only
            metric: must_contain
            must_contain: [hi]
        """, "eval.yaml")
    suite = load_suite(path)
    assert suite.name == "eval"
    assert suite.cases == (Case(id="only", line=2, assertions=(
        OutputContains(id="must_contain[0]", type="output_contains", value="hi"),)),)


@pytest.mark.parametrize(("metric", "does"), [
    ("judge_criteria", "asks an LLM judge"),
    ("semantic_similarity_to", "compares embeddings of the answer with a reference"),
    ("faithfulness", "asks an LLM judge whether the answer is grounded in its context"),
    ("relevance", "asks an LLM judge whether the answer is relevant"),
])
def test_assay_metric_needing_a_model_refused_by_name(tmp_path, metric, does):
    path = write(tmp_path, f"""
        tests:
          - id: graded
            input: "Summarise"
            expected:
              type: {metric}
        """, "eval.yaml")
    assert refusal(path) == (
        f"{path}:5: case 'graded': key 'expected.type': metric '{metric}' needs a model (it "
        f"{does}); tracelab checks recorded runs and never calls a model, so it is refused, not "
        "skipped [read as an Assay eval.yaml: it has top-level `tests`]")


def test_assay_flat_model_metric_refused_by_name(tmp_path):
    path = write(tmp_path, """
        tests:
          - id: graded
            metric: judge_criteria
        """, "eval.yaml")
    assert "key 'metric': metric 'judge_criteria' needs a model" in refusal(path)


def test_assay_unknown_metric(tmp_path):
    path = write(tmp_path, "tests:\n  - id: t\n    metric: sequence_vaild\n", "eval.yaml")
    assert "unknown Assay metric 'sequence_vaild' (supported: must_contain, must_not_contain, " \
           "regex_match, regex_not_match, tool_blocklist, sequence_valid, args_valid)" \
           in refusal(path)


def test_assay_unknown_test_key_says_why_the_file_is_assay(tmp_path):
    path = write(tmp_path, "tests:\n  - id: t\n    expect: {must_not_leak: [x]}\n", "eval.yaml")
    message = refusal(path)
    assert message.startswith(f"{path}:3: case 't': key 'expect': unknown key in an Assay test; "
                              "did you mean 'expected'?")
    assert message.endswith("[read as an Assay eval.yaml: it has top-level `tests`]")


def test_assay_metric_keys_belong_to_their_metric(tmp_path):
    path = write(tmp_path, """
        tests:
          - id: t
            metric: tool_blocklist
            rules: []
        """, "eval.yaml")
    assert "key 'rules': unknown key in an Assay test" in refusal(path)


def test_assay_fixture_not_meeting_expect_names_the_case(tmp_path):
    path = write(tmp_path, """
        tests:
          - id: blocklist-fixture
            assertions:
              - type: tool_blocklist
                test_tool_calls: [read_file]
                policy: {blocked: [delete_all]}
                expect: fail
        """, "eval.yaml")
    assert refusal(path).startswith(
        f"{path}:4: case 'blocklist-fixture': key 'assertions[0]': fixture expects fail, but "
        "test_tool_calls against policy.blocked passes")


def test_assay_sequence_fixture_refused(tmp_path):
    path = write(tmp_path, """
        tests:
          - id: t
            assertions:
              - type: sequence_valid
                test_trace_raw: [{tool: a, args: {}}]
                policy: {regex: "a"}
        """, "eval.yaml")
    assert "Assay's sequence_valid fixture (test_trace_raw + policy) is not supported" \
           in refusal(path)


def test_assay_policy_file_escape_refused(tmp_path):
    path = write(tmp_path, """
        tests:
          - id: t
            metric: args_valid
            policy: ../policies/args.yaml
        """, "eval.yaml")
    assert "key 'policy': path '../policies/args.yaml' contains '..'" in refusal(path)


def test_assay_expected_list_of_two_refused(tmp_path):
    path = write(tmp_path, """
        tests:
          - id: t
            expected:
              - must_contain: a
              - must_contain: b
        """, "eval.yaml")
    assert "a list under `expected` must hold exactly one check, got 2" in refusal(path)


def test_assay_same_metric_twice_refused(tmp_path):
    path = write(tmp_path, """
        tests:
          - id: t
            metric: regex_match
            pattern: a
            expected: {type: regex_match, pattern: b}
        """, "eval.yaml")
    assert "result id 'regex_match' is given twice in this test" in refusal(path)


def test_assay_sequence_policy_file(tmp_path):
    (tmp_path / "seq.yaml").write_text("sequences:\n  - {type: require, tool: login}\n")
    (tmp_path / "order.yaml").write_text("[login, logout]\n")
    path = write(tmp_path, """
        tests:
          - id: rules
            metric: sequence_valid
            policy: seq.yaml
          - id: order
            metric: sequence_valid
            policy: order.yaml
        """, "eval.yaml")
    rules, order = load_suite(path).cases
    assert rules.assertions == (SequenceValid(id="sequence_valid", type="sequence_valid",
                                              rules=(RequireRule("require",
                                                                 ToolMatcher("login")),)),)
    assert order.assertions == (ToolSequence(
        id="sequence_valid", type="trace_tool_sequence",
        sequence=(ToolMatcher("login"), ToolMatcher("logout")), allow_other_tools=False),)


def test_assay_empty_tests_refused(tmp_path):
    path = write(tmp_path, "tests: []\n", "eval.yaml")
    assert "key 'tests': no tests: an empty suite checks nothing" in refusal(path)


def test_assay_structured_policy_uses_schemas_and_refuses_the_rest(tmp_path):
    (tmp_path / "ok.yaml").write_text("version: '2.0'\nschemas:\n  pay: {type: object}\n")
    (tmp_path / "deny.yaml").write_text("tools:\n  deny: [exec]\n")
    ok = write(tmp_path, "tests:\n  - id: t\n    metric: args_valid\n    policy: ok.yaml\n",
               "ok-eval.yaml")
    assert load_suite(ok).cases[0].assertions == (
        ArgsValid(id="args_valid[0]", type="args_valid", tool="pay", schema={"type": "object"}),)
    deny = write(tmp_path, "tests:\n  - id: t\n    metric: args_valid\n    policy: deny.yaml\n",
                 "deny-eval.yaml")
    assert "key 'policy.tools': unknown key in an Assay args policy (only `schemas` is " \
           "supported)" in refusal(deny)


def test_every_foreign_key_is_documented():
    docs = (Path(__file__).resolve().parents[2] / "docs" / "suites.md").read_text()
    keys = {*HARNESS_EXPECT, *METRIC_KEYS, *MODEL_METRICS}
    keys.update(k for metric_keys in METRIC_KEYS.values() for k in metric_keys)
    assert sorted(k for k in keys if f"`{k}`" not in docs and f"expect.{k}`" not in docs) == []


def test_assay_empty_needle_list_refused(tmp_path):
    path = write(tmp_path, "tests:\n  - id: t\n    metric: must_contain\n    must_contain: []\n",
                 "eval.yaml")
    assert refusal(path).startswith(
        f"{path}:4: case 't': key 'must_contain': an empty must_contain list checks nothing")
