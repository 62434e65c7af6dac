"""Selection, case verdicts, summary counts and the JSON dict of a check (suite.md §1, §5, §7)."""
from __future__ import annotations

import json

import pytest

from tests.suite.engine_support import Checker, call, ep, verdicts
from tracelab.engine.evaluate import evaluate
from tracelab.errors import SuiteError, UsageError
from tracelab.store import open_store
from tracelab.suite import load_suite


@pytest.fixture
def checker(store, tmp_path) -> Checker:
    return Checker(store, tmp_path)


def selected(result, case_id: str) -> list[str]:
    rows = result.verdicts.filter((result.verdicts["case_id"] == case_id)
                                  & (result.verdicts["assertion_id"] == "undeclared_writes"))
    return sorted(rows["episode_id"])


def test_without_select_a_case_takes_runs_whose_case_id_equals_its_id(checker):
    checker.ingest(ep("exact", case="roster"), ep("upper", case="Roster"),
                   ep("longer", case="roster-2"), ep("none", case=None))
    result = checker.check("- id: roster\n")
    assert selected(result, "roster") == ["exact"]


def test_select_globs_tags_and_null_fields(checker):
    checker.ingest(
        ep("v142", agent="shift", agent_version="1.4.2", model="gpt-4o", tags=["prod", "eu"]),
        ep("v140", agent="shift", agent_version="1.40", model="gpt-4o-mini", tags=["eu", "x", "prod"]),
        ep("v15", agent="shift", agent_version="1.5.0", model="gpt-4o", tags=["prod"]),
        ep("no-version", agent="shift", model="gpt-4o", tags=["prod", "eu"]),
        ep("bracket", agent="a[b", agent_version="1.4.9", model="o1"),
        ep("other", agent="shiftx", agent_version="1.4.2", model="gpt-4o"),
    )
    result = checker.check("""
        - id: version
          select: {agent: shift, agent_version: "1.4.*"}
        - id: model
          select: {model: "gpt-4o*", tags: [prod, eu]}
        - id: classes
          select: {agent_version: "1.[!4]*"}
        - id: unclosed
          select: {agent: "a[b"}
        - id: everything
          select: {}
        - id: one-char
          select: {agent_version: "1.4?"}
    """)
    assert selected(result, "version") == ["v142"]
    assert selected(result, "model") == ["no-version", "v140", "v142"]
    assert selected(result, "classes") == ["v15"]
    assert selected(result, "unclosed") == ["bracket"]
    assert selected(result, "everything") == ["bracket", "no-version", "other", "v140", "v142",
                                              "v15"]
    assert selected(result, "one-char") == ["v140"]


def test_select_where_is_a_predicate_over_episodes(checker):
    checker.ingest(ep("low", reward=0.5), ep("high", reward=1.0), ep("unscored"),
                   ep("low-other", case="other", reward=0.0))
    result = checker.check("""
        - id: c
          select: {case_id: c, where: "reward < 1 -- a comment stays inside the predicate"}
        - id: d
          select: {where: "reward = 0 OR reward IS NULL"}
    """)
    assert selected(result, "c") == ["low"]
    assert selected(result, "d") == ["low-other", "unscored"]


def test_a_where_failing_on_the_data_is_a_suite_error_naming_the_case(checker):
    checker.ingest(ep("r", agent="not a number"))
    path = checker.suite_path("""
        - id: good
        - id: bad
          select: {where: "CAST(agent AS INTEGER) > 1"}
    """)
    with pytest.raises(SuiteError) as info:
        evaluate(checker.store.con, load_suite(path))
    assert str(info.value).startswith(
        f"{path}:7: case 'bad': key 'select.where' fails on the stored runs with a DuckDB "
        "Conversion Error (the message is not shown")
    assert "\n" not in str(info.value) and "not a number" not in str(info.value)


def test_harness_cases_also_select_by_input_when_case_id_is_missing(checker, tmp_path):
    checker.ingest(ep("by-id", case="greets", input="Hello"),
                   ep("by-input", case=None, input="Hi"),
                   ep("other-case", case="other", input="Hi"),
                   ep("other-input", case=None, input="Hi!"))
    cases = [{"id": "greets", "input": "Hi", "expect": {"mustNotLeak": ["sk-live-"]}}]
    cases += [{"id": f"x{i}", "input": f"x{i}", "expect": {"mustNotLeak": ["sk-"]}}
              for i in range(4)]
    path = tmp_path / "harness.json"
    path.write_text(json.dumps({"agent": "a", "cases": cases}), encoding="utf-8")
    result = evaluate(checker.store.con, load_suite(path))
    assert selected(result, "greets") == ["by-id", "by-input"]


def test_case_verdicts_pass_rate_no_runs_and_permission_failures(checker):
    checker.ingest(
        ep("good", case="rate", output="fine"), ep("bad", case="rate", output="oops"),
        ep("leak", case="perm", output="Jane Doe"), ep("ok", case="perm", output="fine"),
    )
    result = checker.check("""
        - id: rate
          min_pass_rate: 0.5
          expect: {must_mention: [fine]}
        - id: strict-rate
          select: {case_id: rate}
          min_pass_rate: 0.6
          expect: {must_mention: [fine]}
        - id: perm
          category: permissions
          min_pass_rate: 0.0
          expect: {must_not_leak: [Jane Doe]}
        - id: empty
        - id: empty-ok
          allow_no_runs: true
    """)
    got = {c.id: (c.runs, c.runs_passed, c.pass_rate, c.passed, c.permission_failure)
           for c in result.cases}
    assert got == {
        "rate": (2, 1, 0.5, True, False),
        "strict-rate": (2, 1, 0.5, False, False),
        "perm": (2, 1, 0.5, False, True),
        "empty": (0, 0, None, False, False),
        "empty-ok": (0, 0, None, True, False),
    }
    assert not result.passed
    assert result.verdicts.filter(result.verdicts["case_id"].is_in(["empty", "empty-ok"])).height == 0


def test_ninety_nine_of_a_hundred_meet_a_rate_of_099(checker):
    checker.ingest(*[ep(f"r{i:03}", output="fine" if i else "bad") for i in range(100)])
    result = checker.check("""
        - id: c
          min_pass_rate: 0.99
          expect: {must_mention: [fine]}
    """)
    assert [(c.runs, c.runs_passed, c.passed) for c in result.cases] == [(100, 99, True)]


def test_strict_counts_not_exercised_runs_as_failed_but_keeps_the_rows(checker):
    checker.ingest(ep("with-output", output="fine"), ep("without-output"))
    cases = """
        - id: c
          assertions: [{type: output_not_contains, id: quiet, value: secret}]
    """
    lenient = checker.check(cases)
    strict = checker.check(cases, strict=True)
    assert verdicts(strict, "quiet") == verdicts(lenient, "quiet") == {
        "with-output": (True, "yes", None),
        "without-output": (True, "no", "no final output recorded"),
    }
    assert [(c.runs_passed, c.passed) for c in lenient.cases] == [(2, True)]
    assert [(c.runs_passed, c.passed) for c in strict.cases] == [(1, False)]
    assert (lenient.summary.runs_passed, strict.summary.runs_passed) == (2, 1)


def test_summary_counts_and_json_dict(checker):
    tools = [{"name": "get", "effect": "read"}]
    checker.ingest(
        ep("r1", *call("get"), case="a", output="fine", tools=tools),
        ep("r2", case="a", output="nope"),
    )
    result = checker.check("""
        - id: a
          category: basics
          expect: {must_mention: [fine]}
        - id: b
          select: {case_id: a}
          expect: {max_steps: 3}
    """)
    assert result.summary.__dict__ == {
        "cases": 2, "cases_passed": 1, "runs": 2, "runs_passed": 1,
        # per case and run: must_not_leak[0] and undeclared_writes, plus must_mention / max_steps
        "results": 12, "failed": 1, "not_exercised": 4, "unknown": 2,
    }
    assert result.to_json_dict() == {
        "summary": result.summary.__dict__,
        "cases": [
            {"id": "a", "category": "basics", "runs": 2, "runs_passed": 1, "pass_rate": 0.5,
             "min_pass_rate": 1.0, "passed": False, "permission_failures": []},
            {"id": "b", "category": None, "runs": 2, "runs_passed": 2, "pass_rate": 1.0,
             "min_pass_rate": 1.0, "passed": True, "permission_failures": []},
        ],
        "failures": [
            {"case": "a", "assertion": "must_mention[0]", "type": "must_mention", "severity": 4,
             "failed_runs": 1, "same_write": {},
             "examples": [{"episode_id": "r2", "step_idx": None, "reason": 'does not mention "fine"', "also": []}]},
        ],
        "results": [
            {"case": "a", "assertion": "must_mention[0]", "type": "must_mention",
             "episode_id": "r2", "passed": False, "exercised": "yes",
             "reason": 'does not mention "fine"', "step_idx": None},
            {"case": "a", "assertion": "undeclared_writes", "type": "undeclared_writes",
             "episode_id": "r1", "passed": True, "exercised": "no",
             "reason": "every offered tool and every call is read-only", "step_idx": None},
            {"case": "b", "assertion": "max_steps", "type": "max_steps", "episode_id": "r1",
             "passed": True, "exercised": "no", "reason": "no budget step recorded steps_used", "step_idx": None},
            {"case": "b", "assertion": "max_steps", "type": "max_steps", "episode_id": "r2",
             "passed": True, "exercised": "no", "reason": "no budget step recorded steps_used", "step_idx": None},
            {"case": "b", "assertion": "undeclared_writes", "type": "undeclared_writes",
             "episode_id": "r1", "passed": True, "exercised": "no",
             "reason": "every offered tool and every call is read-only", "step_idx": None},
        ],
    }
    assert len(result.to_json_dict(all_results=True)["results"]) == 12


def test_case_and_category_filters(checker):
    checker.ingest(ep("r", case="a"), ep("s", case="b"))
    cases = """
        - id: a
          category: perm
        - id: b
          category: other
        - id: c
          category: perm
    """
    suite = load_suite(checker.suite_path(cases))
    con = checker.store.con
    assert [c.id for c in evaluate(con, suite, cases=["b", "c"]).cases] == ["b", "c"]
    assert [c.id for c in evaluate(con, suite, categories=["perm"]).cases] == ["a", "c"]
    assert [c.id for c in evaluate(con, suite, cases=["a", "b"], categories=["perm"]).cases] == ["a"]
    with pytest.raises(UsageError, match="no case 'zz'"):
        evaluate(con, suite, cases=["zz"])
    with pytest.raises(UsageError, match="no case has category 'nope' .categories: other, perm."):
        evaluate(con, suite, categories=["nope"])


def test_a_check_leaves_no_temp_state_and_can_run_again(checker):
    checker.ingest(ep("r", output="fine"))
    cases = """
        - id: c
          expect: {must_mention: [fine]}
    """
    first = checker.check(cases)
    second = checker.check(cases)
    assert first.verdicts.equals(second.verdicts)
    leftovers = checker.store.con.sql(
        "SELECT table_name FROM duckdb_tables() WHERE temporary AND starts_with(table_name, 'chk_')"
        " UNION ALL SELECT view_name FROM duckdb_views() WHERE starts_with(view_name, 'p_')"
        " UNION ALL SELECT function_name FROM duckdb_functions()"
        " WHERE starts_with(function_name, 'chk_')").fetchall()
    assert leftovers == []


def test_read_only_and_parquet_stores_give_the_same_verdicts(store, tmp_path):
    checker = Checker(store, tmp_path)
    checker.ingest(
        ep("leaky", *call("pay", {"to": "Jane Doe"}), output="done",
           tools=[{"name": "pay", "effect": "write", "parameters": {"type": "object"}}]),
        ep("clean", *call("pay", {"to": 1}), output="done"),
    )
    suite = load_suite(checker.suite_path("""
        - id: c
          expect: {must_not_leak: [jane doe], writes: [pay]}
          assertions:
            - {type: args_valid, tool: pay, schema: {properties: {to: {type: string}}}}
            - {type: sequence_valid, rules: [{type: require, tool: {tool: pay, args_match: {to: J}}}]}
    """))
    expected = evaluate(store.con, suite).verdicts
    failed = expected.filter(~expected["passed"])
    assert sorted(zip(failed["episode_id"], failed["assertion_id"], strict=True)) == [
        ("clean", "args_valid[0]"), ("clean", "sequence_valid[1]"), ("clean", "writes[0]"),
        ("leaky", "must_not_leak[1]")]
    store.export(tmp_path / "parquet")
    store.close()
    with open_store(tmp_path / "parquet") as parquet:
        assert evaluate(parquet.con, suite).verdicts.equals(expected)
    with open_store(tmp_path / "store.duckdb", read_only=True) as read_only:
        assert evaluate(read_only.con, suite).verdicts.equals(expected)


def test_the_report_rows_a_check_saves_mark_the_runs_that_crossed_a_permission_boundary(checker):
    # saved.view_rows: a case's permission flag and its failing runs, those that crossed first
    from tracelab.results.saved import view_rows

    checker.ingest(ep("a-rude", case="c", output="oops"), ep("b-leak", case="c", output="Jane Doe"),
                   ep("c-ok", case="c", output="fine"))
    result = checker.check("""
        - id: both
          select: {case_id: c}
          min_pass_rate: 0.0
          expect: {must_mention: [fine], must_not_leak: [Jane Doe]}
        - id: mention
          select: {case_id: c}
          min_pass_rate: 0.0
          expect: {must_mention: [fine]}
    """)
    rows = view_rows(result)
    assert sorted(rows["check_cases"].select("case_id", "runs", "runs_passed", "failed", "permission").rows()) == [
        ("both", 3, 1, 3, True), ("mention", 3, 1, 2, False)]
    shown = rows["check_failing_runs"].sort("case_id", "episode_id")
    assert shown.select("case_id", "episode_id", "permission").rows() == [
        ("both", "a-rude", False), ("both", "b-leak", True), ("mention", "a-rude", False), ("mention", "b-leak", False)]
