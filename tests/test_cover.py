"""Coverage (tracelab.results.cover): how the verdicts of suite.md §5 add up per case and assertion.

The engine's tests pin each verdict; these pin what cover makes of them: the counts,
the `no` reasons grouped and counted (most frequent first), the status, and the order
(never exercised and unchecked first, then under 10%, then the rest, suite order within).
"""
from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from tests.suite.engine_support import Checker, call, ep
from tracelab.results import cover
from tracelab.store import open_store

LOOKUP = {"name": "lookup", "effect": "read",
          "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}

# Four runs of case "c", each recording a different amount:
#   declared-read   offers lookup (read, with parameters) and purge (read); calls lookup;
#                   one retrieval step without budget_bytes; an output
#   declared-write  offers lookup and delete (write); calls delete (an executed, undeclared
#                   write); a budget step with steps_used; no output
#   undeclared      records no tool list (availability unknown); calls lookup; an output
#   empty           offers no tool ("tools": []); no step; no output
RUNS = (
    ep("declared-read", {"kind": "user", "text": "find x"}, *call("lookup", {"q": "x"}),
       {"kind": "retrieval", "data": {"query": "x", "candidates": [{"id": "k1", "content": "a"}],
                                      "returned": ["k1"], "omitted": 0}},
       output="done", tools=[LOOKUP, {"name": "purge", "effect": "read"}]),
    ep("declared-write", *call("delete", {"id": 1}), {"kind": "budget", "steps_used": 2},
       tools=[{"name": "lookup", "effect": "read"}, {"name": "delete", "effect": "write"}]),
    ep("undeclared", *call("lookup", {"q": "y"}), output="done"),
    ep("empty", tools=[]),
)

RULES_SUITE = """
- id: c
  expect:
    max_steps: 5
    must_not_write: [purge]
  assertions:
    - {id: no-delete, type: trace_must_not_call_tool, tool: delete}
    - {id: at-most, type: sequence_valid, rules: [{type: max_calls, tool: delete, max: 1}]}
    - {id: blocklist, type: tool_blocklist, blocked: [drop]}
    - {id: rule-blocklist, type: sequence_valid, rules: [{type: blocklist, pattern: drop}]}
    - {id: steps, type: trace_max_steps, max: 10}
    - {id: lookup-args, type: args_valid, tool: lookup, schema: from_definitions}
    - {id: delete-status, type: tool_status, tool: delete}
    - {id: before, type: sequence_valid, rules: [{type: before, first: lookup, then: delete}]}
    - {id: after, type: sequence_valid, rules: [{type: after, trigger: delete, then: lookup}]}
    - {id: never-after, type: sequence_valid, rules: [{type: never_after, trigger: delete, forbidden: lookup}]}
    - {id: in-order, type: sequence_valid, rules: [{type: sequence, tools: [delete, purge]}]}
    - id: all-rules-no
      type: sequence_valid
      rules: [{type: before, first: lookup, then: purge}, {type: never_after, trigger: purge, forbidden: lookup}]
    - id: some-rule-unknown
      type: sequence_valid
      rules: [{type: max_calls, tool: purge, max: 1}, {type: before, first: lookup, then: purge}]
    - {id: omissions, type: retrieval_reports_omissions}
    - {id: budget, type: retrieval_within_budget}
    - {id: no-secret-out, type: output_not_contains, value: secret}
    - {id: no-secret-pattern, type: output_not_matches, pattern: "sk-[a-z]+"}
    - {id: must-call, type: trace_must_call_tool, tool: lookup}
"""

NO_OUTPUT = [("no final output recorded", 2)]

# assertion id -> (runs, passed, failed, yes, no, unknown, status, [(reason, runs), ...])
EXPECTED = {
    # not offered in declared-read and empty: no; unknown in undeclared; called (a failure) in declared-write
    "no-delete": (4, 3, 1, 1, 2, 1, "exercised", [('"delete" was not offered', 2)]),
    "at-most": (4, 4, 0, 1, 2, 1, "exercised", [('rules[0] (max_calls): "delete" was not offered', 2)]),
    # two different reasons for `no`, the more frequent first; unknown where nothing is recorded;
    # exercised in 0 runs but not "never": one run is unknown, and unknown is never reported as no
    "must_not_write[0]": (4, 4, 0, 0, 3, 1, "rarely_exercised",
                          [('"purge" was not offered', 2), ('"purge" is read-only', 1)]),
    "blocklist": (4, 4, 0, 0, 3, 1, "rarely_exercised", [("no blocked tool was offered", 3)]),
    "rule-blocklist": (4, 4, 0, 0, 3, 1, "rarely_exercised",
                       [("rules[0] (blocklist): no blocked tool was offered", 3)]),
    # every tool and call read-only in declared-read and empty; effects unknown in undeclared
    "undeclared_writes": (4, 3, 1, 1, 2, 1, "exercised", [("every offered tool and every call is read-only", 2)]),
    "max_steps": (4, 4, 0, 1, 3, 0, "exercised", [("no budget step recorded steps_used", 3)]),
    "steps": (4, 4, 0, 3, 1, 0, "exercised", [("0 steps", 1)]),
    # no call of lookup in declared-write and empty; no recorded parameters in undeclared
    "lookup-args": (4, 4, 0, 1, 2, 1, "exercised", [('no call of "lookup"', 2)]),
    "delete-status": (4, 4, 0, 1, 3, 0, "exercised", [('no call matches "delete"', 3)]),
    "before": (4, 3, 1, 1, 3, 0, "exercised", [('rules[0] (before): no call matches "delete"', 3)]),
    "after": (4, 3, 1, 1, 3, 0, "exercised", [('rules[0] (after): no call matches "delete"', 3)]),
    "never-after": (4, 4, 0, 1, 3, 0, "exercised", [('rules[0] (never_after): no call matches "delete"', 3)]),
    "in-order": (4, 3, 1, 1, 3, 0, "exercised", [("rules[0] (sequence): no call matches any of its tools", 3)]),
    # the entry is `no` when every rule is: in every run, so never exercised
    "all-rules-no": (4, 4, 0, 0, 4, 0, "never_exercised",
                     [('rules[0] (before): no call matches "purge"; '
                       'rules[1] (never_after): no call matches "purge"', 4)]),
    # unknown in undeclared (one rule unknown, none yes); yes in declared-read (purge offered)
    "some-rule-unknown": (4, 4, 0, 1, 2, 1, "exercised",
                          [('rules[0] (max_calls): "purge" was not offered; '
                            'rules[1] (before): no call matches "purge"', 2)]),
    "omissions": (4, 4, 0, 1, 3, 0, "exercised", [("no retrieval step", 3)]),
    "budget": (4, 4, 0, 0, 4, 0, "never_exercised", [("no retrieval step with budget_bytes", 4)]),
    "no-secret-out": (4, 4, 0, 2, 2, 0, "exercised", NO_OUTPUT),
    "no-secret-pattern": (4, 4, 0, 2, 2, 0, "exercised", NO_OUTPUT),
    # never `no`: always exercised, failures included
    "must-call": (4, 2, 2, 4, 0, 0, "exercised", []),
    "must_not_leak[0]": (4, 4, 0, 4, 0, 0, "exercised", []),
}


@pytest.fixture(scope="module")
def rules_coverage(tmp_path_factory) -> cover.Coverage:
    folder = tmp_path_factory.mktemp("cover-rules")
    with open_store(folder / "store.duckdb") as store:
        checker = Checker(store, folder)
        checker.ingest(*RUNS)
        return cover.cover(store, checker.suite_path(RULES_SUITE))


@pytest.fixture(scope="module")
def rules_table(rules_coverage) -> pl.DataFrame:
    return rules_coverage.table


def _row(table: pl.DataFrame, assertion_id: str) -> tuple:
    rows = table.filter(pl.col("assertion_id") == assertion_id)
    assert rows.height == 1
    r = rows.row(0, named=True)
    reasons = [(item["reason"], item["runs"]) for item in r["not_exercised_reasons"]]
    return (r["runs"], r["passed"], r["failed"], r["exercised_yes"], r["exercised_no"],
            r["exercised_unknown"], r["status"], reasons)


@pytest.mark.parametrize("assertion_id", sorted(EXPECTED))
def test_cover_counts_and_groups_each_section_5_rule(rules_table, assertion_id):
    assert _row(rules_table, assertion_id) == EXPECTED[assertion_id]


def test_every_result_of_the_case_is_in_the_table_once(rules_table):
    assert sorted(rules_table["assertion_id"]) == sorted(EXPECTED)
    assert rules_table["exercised_rate"].to_list() == [
        row[3] / row[0] for row in (_row(rules_table, a) for a in rules_table["assertion_id"])]


def test_never_exercised_first_then_rarely_in_suite_order(rules_table):
    statuses = rules_table["status"].to_list()
    assert statuses[:2] == ["never_exercised", "never_exercised"]
    assert statuses[2:5] == ["rarely_exercised"] * 3
    assert set(statuses[5:]) == {"exercised"}
    # within a group, suite order: all-rules-no comes before budget in the file,
    # must_not_write[0] (expect) before the typed blocklist assertions
    assert rules_table["assertion_id"].to_list()[:5] == [
        "all-rules-no", "budget", "must_not_write[0]", "blocklist", "rule-blocklist"]


# ---------------------------------------------------------------- order and the 10% boundary

ORDER_SUITE = """
- id: eleven
  assertions:
    - {id: used, type: trace_must_call_tool, tool: lookup}
    - {id: rare, type: tool_status, tool: rare_tool}
    - {id: ghost, type: trace_must_not_call_tool, tool: ghost}
- id: ten
  assertions:
    - {id: tenth, type: tool_status, tool: rare_tool}
    - {id: ghost-too, type: trace_must_not_call_tool, tool: ghost}
- id: nobody
  allow_no_runs: true
"""

# every run offers a write tool it never calls, so undeclared_writes is exercised (yes)
TOOLS = [{"name": "lookup", "effect": "read"}, {"name": "rare_tool", "effect": "read"},
         {"name": "save", "effect": "write"}]


def _runs(case: str, n: int) -> list[dict]:
    """n runs calling lookup; the first also calls rare_tool."""
    return [ep(f"{case}-{i:02d}", *call("lookup"), *(call("rare_tool") if i == 0 else []),
               case=case, tools=TOOLS) for i in range(n)]


@pytest.fixture(scope="module")
def order_coverage(tmp_path_factory) -> cover.Coverage:
    folder = tmp_path_factory.mktemp("cover-order")
    with open_store(folder / "store.duckdb") as store:
        checker = Checker(store, folder)
        checker.ingest(*_runs("eleven", 11), *_runs("ten", 10))
        return cover.cover(store, checker.suite_path(ORDER_SUITE))


def test_order_never_and_unchecked_first_then_under_ten_percent(order_coverage):
    table = order_coverage.table
    assert table.select("case_id", "assertion_id", "status").rows() == [
        ("eleven", "ghost", "never_exercised"),
        ("ten", "ghost-too", "never_exercised"),
        ("nobody", "must_not_leak[0]", "no_runs"),
        ("nobody", "undeclared_writes", "no_runs"),
        ("eleven", "rare", "rarely_exercised"),         # 1 of 11 runs: 9.1%
        ("eleven", "must_not_leak[0]", "exercised"),
        ("eleven", "undeclared_writes", "exercised"),
        ("eleven", "used", "exercised"),
        ("ten", "must_not_leak[0]", "exercised"),
        ("ten", "undeclared_writes", "exercised"),
        ("ten", "tenth", "exercised"),                  # 1 of 10 runs: 10% is not under 10%
    ]


def test_a_case_without_runs_has_zero_counts_and_no_rate(order_coverage):
    nobody = order_coverage.table.filter(pl.col("case_id") == "nobody").row(0, named=True)
    assert {k: nobody[k] for k in ("runs", "passed", "failed", "exercised_yes", "exercised_no",
                                   "exercised_unknown", "exercised_rate", "not_exercised_reasons")} == {
        "runs": 0, "passed": 0, "failed": 0, "exercised_yes": 0, "exercised_no": 0,
        "exercised_unknown": 0, "exercised_rate": None, "not_exercised_reasons": []}


def test_summary_counts_statuses(order_coverage):
    assert order_coverage.summary() == {
        "cases": 3, "cases_without_runs": 1, "runs": 21, "assertions": 11,
        "never_exercised": 2, "no_runs": 2, "rarely_exercised": 1, "exercised": 6}


def test_rare_reasons_are_counted_over_the_runs_that_did_not_exercise(order_coverage):
    rare = order_coverage.table.filter(pl.col("assertion_id") == "rare").row(0, named=True)
    assert (rare["runs"], rare["exercised_yes"], rare["exercised_no"]) == (11, 1, 10)
    assert rare["exercised_rate"] == pytest.approx(1 / 11)
    assert rare["not_exercised_reasons"] == [{"reason": 'no call matches "rare_tool"', "runs": 10}]


def test_cover_evaluates_the_suite_once_and_saves_nothing(store, tmp_path, monkeypatch):
    import tracelab.engine.evaluate as engine

    calls_made = []
    original = engine.evaluate

    def counting(*args, **kwargs):
        calls_made.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(engine, "evaluate", counting)
    checker = Checker(store, tmp_path)
    checker.ingest(*_runs("eleven", 3))
    measured = cover.cover(store, checker.suite_path(ORDER_SUITE), cases=["eleven"])
    assert len(calls_made) == 1
    assert measured.run.saved is False
    assert store.sql("SELECT count(*) AS n FROM check_results")["n"].to_list() == [0]
    assert set(measured.table["case_id"]) == {"eleven"}


def test_cover_measures_a_suite_the_static_sweep_refuses(store, tmp_path):
    checker = Checker(store, tmp_path)
    checker.ingest(*_runs("eleven", 2))
    measured = cover.cover(store, checker.suite_path("""
        - id: eleven
          assertions:
            - {id: vacuous, type: trace_must_call_tool, tool: lookup, min_calls: 0}
    """))
    assert [(f.kind, f.assertion) for f in measured.findings] == [("ineffective", "vacuous")]
    assert measured.table.filter(pl.col("assertion_id") == "vacuous")["runs"].to_list() == [2]
    assert "note  the static sweep has 1 finding: see `tracelab lint`" in measured.render_text()


# ---------------------------------------------------------------- notebook helpers

def test_coverage_matrix_has_a_rate_per_case_and_assertion(order_coverage):
    matrix = cover.coverage_matrix(order_coverage.table)
    assert matrix["case_id"].to_list() == ["eleven", "ten", "nobody"]
    assert matrix.columns == ["case_id", "ghost", "ghost-too", "must_not_leak[0]", "undeclared_writes",
                              "rare", "used", "tenth"]
    assert matrix.row(0) == ("eleven", 0.0, None, 1.0, 1.0, pytest.approx(1 / 11), 1.0, None)
    assert matrix.row(2) == ("nobody", None, None, None, None, None, None, None)


def test_pass_rate_by_groups_runs_by_an_episode_field(store, tmp_path):
    checker = Checker(store, tmp_path)
    checker.ingest(ep("a1", *call("lookup"), agent_version="1.0"), ep("a2", agent_version="1.0"),
                   ep("b1", *call("lookup"), agent_version="2.0"), ep("n1", *call("lookup")))
    run = cover.cover(store, checker.suite_path("""
        - id: c
          assertions: [{id: uses, type: trace_must_call_tool, tool: lookup}]
    """)).run
    rates = cover.pass_rate_by(store, run.verdicts, "agent_version")
    assert rates.select("agent_version", "runs", "runs_passed", "pass_rate").rows() == [
        ("(not recorded)", 1, 1, 1.0), ("1.0", 2, 1, 0.5), ("2.0", 1, 1, 1.0)]
    assert [(round(lo, 4), round(hi, 4)) for lo, hi in rates.select("low", "high").rows()] == [
        (0.2065, 1.0), (0.0945, 0.9055), (0.2065, 1.0)]  # 95% Wilson intervals
    with pytest.raises(Exception, match="cannot group by 'input'"):
        cover.pass_rate_by(store, run.verdicts, "input")


def test_not_exercised_reasons_count_results_per_type(rules_coverage):
    reasons = cover.not_exercised_reasons(rules_coverage.run.verdicts)
    assert reasons.head(3).rows() == [
        ("retrieval_within_budget", "no retrieval step with budget_bytes", 4),
        ("sequence_valid", 'rules[0] (before): no call matches "purge"; '
                           'rules[1] (never_after): no call matches "purge"', 4),
        ("max_steps", "no budget step recorded steps_used", 3),
    ]
    assert int(reasons["results"].sum()) == int(rules_coverage.table["exercised_no"].sum())


def test_leaks_and_executed_writes_tables(store, tmp_path):
    checker = Checker(store, tmp_path)
    checker.ingest(ep("leaky", output="key sk-live-123", agent="bot", model="m1"),
                   ep("writer", *call("delete", effect="write"), agent="bot", model="m2"),
                   ep("other-case", *call("delete", effect="write"), case="d"))
    run = cover.cover(store, checker.suite_path("""
        - id: c
          expect: {must_not_leak: [sk-live-], writes_allowed: [delete]}
    """)).run
    assert cover.leaks(store, run.verdicts).rows() == [
        ("leaky", "c", "must_not_leak[1]", 'LEAKED "sk-live-" — this run crossed a permission boundary',
         "bot", None, "m1")]
    writes = cover.executed_writes(store, run.verdicts)
    assert writes.select("episode_id", "call_index", "tool_name", "model").rows() == [("writer", 0, "delete", "m2")]


@pytest.mark.parametrize(("status", "executed"), [("ok", True), ("denied", False), ("error", False),
                                                  (None, False)])
def test_an_executed_write_is_a_write_that_ran(store, tmp_path, status, executed):
    # docs/trace-format.md §1, §4: only status ok means the tool ran; a denied, failed or unanswered
    # (missing) write call is not an executed write, in the store's view and in a check alike
    checker = Checker(store, tmp_path)
    checker.ingest(ep("r", *call("delete", effect="write", status=status)))
    assert store.con.sql("SELECT episode_id FROM executed_writes").fetchall() == ([("r",)] if executed else [])
    result = checker.check("""
        - id: c
          expect: {writes: [delete]}
        - id: d
          select: {case_id: c}
          expect: {must_not_write: [delete]}
    """)
    verdicts = {(r["case_id"], r["assertion_id"]): r["passed"] for r in result.verdicts.iter_rows(named=True)}
    assert verdicts[("c", "writes[0]")] is executed
    assert verdicts[("d", "must_not_write[0]")] is not executed
    assert verdicts[("d", "undeclared_writes")] is not executed


def test_sample_suite_has_a_never_exercised_assertion(tmp_path):
    repo = Path(__file__).resolve().parents[1]
    with open_store(tmp_path / "s.duckdb") as store:
        store.ingest([repo / "sample_traces" / "native"])
        table = cover.cover(store, repo / "sample_traces" / "suite.yaml").table
    never = table.filter(pl.col("status") == "never_exercised")
    assert ("assign-shift", "no-unassigning") in never.select("case_id", "assertion_id").rows()
    assert table["status"][0] == "never_exercised"
