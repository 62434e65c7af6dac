"""`tracelab cover`, `tracelab lint` and `check --baseline / --export-baseline` from the outside."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.suite.engine_support import HEAD, Checker, call, ep
from tracelab.cli import main
from tracelab.store import open_store

REPO = Path(__file__).resolve().parents[2]
TOOLS = [{"name": "lookup", "effect": "read"}, {"name": "save", "effect": "write"}]

SUITE = """
- id: c
  category: guards
  assertions:
    - {id: no-ghost, type: trace_must_not_call_tool, tool: ghost}
    - {id: lookup-ok, type: tool_status, tool: lookup}
- id: nobody
  category: other
  allow_no_runs: true
"""


def tracelab(capsys, *args: str) -> tuple[int, str, str]:
    """Run the CLI entry point: (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as info:
        main(list(args))
    out = capsys.readouterr()
    return info.value.code, out.out, out.err


@pytest.fixture
def corpus(tmp_path) -> tuple[Checker, str]:
    """Three runs of case `c` offering lookup (read) and save (write); r3 calls nothing."""
    path = tmp_path / "store.duckdb"
    with open_store(path) as store:
        checker = Checker(store, tmp_path)
        checker.ingest(ep("r1", *call("lookup"), tools=TOOLS), ep("r2", *call("lookup"), tools=TOOLS),
                       ep("r3", tools=TOOLS))
    return checker, str(path)


def test_cover_text_lists_never_exercised_first(capsys, corpus):
    checker, store = corpus
    code, out, _ = tracelab(capsys, "cover", str(checker.suite_path(SUITE)), "--store", store)
    assert code == 0
    assert out == """\
engine-test: exercise coverage of 6 assertions in 2 cases over 3 runs

never exercised: no selected run could have failed these (3)
  case    assertion          type                      runs  pass  fail  yes  no  unknown  exercised
  c       no-ghost           trace_must_not_call_tool     3     3     0    0   3        0         0%
      not exercised in 3 runs: "ghost" was not offered
  nobody  must_not_leak[0]   must_not_leak                0     0     0    0   0        0          -
      the case selects no run
  nobody  undeclared_writes  undeclared_writes            0     0     0    0   0        0          -
      the case selects no run

exercised (3)
  case    assertion          type                      runs  pass  fail  yes  no  unknown  exercised
  c       must_not_leak[0]   must_not_leak                3     3     0    3   0        0       100%
  c       undeclared_writes  undeclared_writes            3     3     0    3   0        0       100%
  c       lookup-ok          tool_status                  3     3     0    2   1        0        67%
      not exercised in 1 run: no call matches "lookup"
"""


def test_cover_json(capsys, corpus):
    checker, store = corpus
    code, out, _ = tracelab(capsys, "cover", str(checker.suite_path(SUITE)), "--store", store,
                            "--format", "json")
    document = json.loads(out)
    assert code == 0
    assert document["summary"] == {"cases": 2, "cases_without_runs": 1, "runs": 3, "assertions": 6,
                                   "never_exercised": 1, "no_runs": 2, "rarely_exercised": 0,
                                   "exercised": 3}
    assert document["assertions"][0] == {
        "case": "c", "category": "guards", "assertion": "no-ghost", "type": "trace_must_not_call_tool",
        "status": "never_exercised", "runs": 3, "passed": 3, "failed": 0,
        "exercised": {"yes": 0, "no": 3, "unknown": 0}, "exercised_rate": 0.0,
        "not_exercised_reasons": [{"reason": '"ghost" was not offered', "runs": 3}]}
    assert [a["assertion"] for a in document["assertions"]][3:] == [
        "must_not_leak[0]", "undeclared_writes", "lookup-ok"]


def test_cover_filters_by_case_and_category_and_saves_nothing(capsys, corpus):
    checker, store = corpus
    suite = str(checker.suite_path(SUITE))
    by_case = json.loads(tracelab(capsys, "cover", suite, "--store", store, "--case", "c",
                                  "--format", "json")[1])
    by_category = json.loads(tracelab(capsys, "cover", suite, "--store", store, "--category", "other",
                                      "--format", "json")[1])
    assert {a["case"] for a in by_case["assertions"]} == {"c"}
    assert {a["case"] for a in by_category["assertions"]} == {"nobody"}
    with open_store(store, read_only=True) as opened:
        assert opened.sql("SELECT count(*) AS n FROM check_runs")["n"].to_list() == [0]


def test_cover_user_errors(capsys, corpus, tmp_path):
    checker, store = corpus
    suite = str(checker.suite_path(SUITE))
    unknown_case = tracelab(capsys, "cover", suite, "--store", store, "--case", "nope")
    missing_store = tracelab(capsys, "cover", suite, "--store", str(tmp_path / "missing.duckdb"))
    assert (unknown_case[0], unknown_case[2]) == (
        2, f"error: {suite}: no case 'nope' in suite 'engine-test'\n")
    assert (missing_store[0], missing_store[2]) == (
        3, f"error: no store at {tmp_path / 'missing.duckdb'}; run `tracelab ingest` first\n")


def test_cover_on_the_sample_traces_lists_the_never_exercised_guard(capsys, tmp_path):
    store = str(tmp_path / "samples.duckdb")
    with open_store(store) as opened:
        opened.ingest([REPO / "sample_traces" / "native"])
    code, out, _ = tracelab(capsys, "cover", str(REPO / "sample_traces" / "suite.yaml"), "--store", store)
    lines = out.splitlines()
    assert code == 0
    assert lines[2].startswith("never exercised: no selected run could have failed these")
    never = lines[3:lines.index("", 3)]
    assert any(line.split()[:2] == ["assign-shift", "no-unassigning"] for line in never)
    assert '      not exercised in 3 runs: "unassign_shift" was not offered' in never


# ---------------------------------------------------------------- lint: the static sweep

@pytest.mark.parametrize(("body", "kind", "assertion", "reason"), [
    ("assertions: [{type: trace_must_call_tool, tool: t, min_calls: 0}]",
     "ineffective", "trace_must_call_tool[0]", "min_calls 0 with no max_calls holds for every run"),
    ("expect: {tools_called: ['']}", "ineffective", "tools_called[0]", "an empty tool name"),
    ("expect: {must_mention: ['']}", "ineffective", "must_mention[0]",
     "an empty string is mentioned by every run"),
    ("assertions: [{type: trace_tool_sequence, sequence: [], allow_other_tools: true}]",
     "ineffective", "trace_tool_sequence[0]", "sequence: [] with allow_other_tools: true holds for every run"),
    ("assertions: [{type: tool_blocklist, blocked: []}]", "ineffective", "tool_blocklist[0]",
     "an empty blocked list blocks nothing"),
    ("assertions: [{type: args_valid, tool: t, schema: {}}]", "ineffective", "args_valid[0]",
     "the schema accepts every value ({} or true)"),
    ("assertions: [{type: args_valid, tool: t, schema: true}]", "ineffective", "args_valid[0]",
     "the schema accepts every value ({} or true)"),
    ("expect: {must_not_leak: ['']}", "contradictory", "must_not_leak[1]",
     "an empty string occurs in every transcript, so every run leaks it"),
    ("assertions: [{type: sequence_valid, rules: [{type: after, trigger: a, then: b, within: 0}]}]",
     "contradictory", "sequence_valid[0]", "rules[0] (after): within 0 is below 1"),
    ("expect: {writes: [pay], must_not_write: [pay]}", "contradictory", "must_not_write[0]",
     "'pay' is also in writes[0]: it must and must not write"),
    ("expect: {tools_called: [pay]}\n  assertions: [{type: trace_must_not_call_tool, tool: pay}]",
     "contradictory", "trace_must_not_call_tool[0]",
     "'pay' is also in tools_called[0]: it must and must not be called"),
])
def test_lint_refuses_each_static_finding_with_exit_2(capsys, tmp_path, monkeypatch, body, kind, assertion, reason):
    monkeypatch.chdir(tmp_path)  # no ./tracelab.duckdb: the static sweep alone
    monkeypatch.delenv("TRACELAB_STORE", raising=False)
    suite = tmp_path / "suite.yaml"
    suite.write_text(HEAD + f"cases:\n- id: c\n  {body}\n", encoding="utf-8")
    code, out, _ = tracelab(capsys, "lint", str(suite))
    assert code == 2
    assert out.splitlines() == [
        f"{suite}: 1 finding (1 refused, 0 from the store; static sweep only: no store, so no data findings)",
        f"  refused  {kind}  c  {assertion}  {reason}",
    ]


def test_lint_clean_without_a_store_is_exit_0(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TRACELAB_STORE", raising=False)
    suite = tmp_path / "suite.yaml"
    suite.write_text(HEAD + "cases:\n- id: c\n  select: {}\n", encoding="utf-8")
    assert tracelab(capsys, "lint", str(suite))[:2] == (
        0, f"{suite}: clean (static sweep only: no store, so no data findings)\n")


# ---------------------------------------------------------------- lint: with a store

def test_lint_with_a_store_reports_what_the_runs_decide(capsys, corpus):
    checker, store = corpus
    suite = checker.suite_path("""
        - id: c
          assertions:
            - {id: no-ghost, type: trace_must_not_call_tool, tool: ghost}
        - id: orphan
        - id: filtered
          select: {agent: nobody}
          allow_no_runs: true
        - id: everything
          select: {}
    """)
    code, out, _ = tracelab(capsys, "lint", str(suite), "--store", store)
    assert code == 1
    assert out.splitlines() == [
        f"{suite}: 4 findings (0 refused, 4 from the store; static sweep and store {store})",
        "  store  never_exercised    c           no-ghost  none of its 3 runs could have failed it: "
        '"ghost" was not offered (3)',
        "  store  selects_no_run     orphan      -         no stored run has case_id 'orphan' "
        "(the case has no select); check fails it",
        "  store  selects_no_run     filtered    -         no stored run matches its select; "
        "allow_no_runs lets it pass",
        "  store  selects_every_run  everything  -         select: {} selects every stored run (3), "
        "whatever its case_id or agent",
    ]


def test_lint_with_store_and_static_findings_is_exit_2_and_json(capsys, corpus):
    checker, store = corpus
    suite = checker.suite_path("""
        - id: orphan
          assertions: [{id: vacuous, type: tool_blocklist, blocked: []}]
    """)
    code, out, _ = tracelab(capsys, "lint", str(suite), "--store", store, "--format", "json")
    assert code == 2
    assert json.loads(out) == {
        "suite_path": str(suite), "store": store, "exit_code": 2,
        "findings": [
            {"kind": "ineffective", "refused": True, "case": "orphan", "assertion": "vacuous",
             "reason": "an empty blocked list blocks nothing"},
            {"kind": "selects_no_run", "refused": False, "case": "orphan", "assertion": None,
             "reason": "no stored run has case_id 'orphan' (the case has no select); check fails it"},
        ]}


def test_lint_clean_with_a_store_is_exit_0(capsys, corpus):
    checker, store = corpus
    suite = checker.suite_path("""
        - id: c
          assertions: [{id: looks-up, type: trace_must_call_tool, tool: lookup, max_calls: 1}]
    """)
    assert tracelab(capsys, "lint", str(suite), "--store", store)[:2] == (
        0, f"{suite}: clean (static sweep and store {store})\n")


def test_lint_reads_the_store_from_the_environment_or_the_default_file(capsys, corpus, tmp_path, monkeypatch):
    checker, store = corpus
    suite = str(checker.suite_path("- id: orphan\n"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TRACELAB_STORE", store)
    assert tracelab(capsys, "lint", suite)[0] == 1
    monkeypatch.delenv("TRACELAB_STORE")
    assert tracelab(capsys, "lint", suite)[0] == 0  # no ./tracelab.duckdb here
    Path(store).rename(tmp_path / "tracelab.duckdb")
    assert tracelab(capsys, "lint", suite)[0] == 1


def test_lint_on_a_named_store_that_does_not_exist_is_exit_3(capsys, corpus, tmp_path):
    checker, _ = corpus
    code, _, err = tracelab(capsys, "lint", str(checker.suite_path("- id: c\n")),
                            "--store", str(tmp_path / "nope.duckdb"))
    assert (code, err) == (3, f"error: no store at {tmp_path / 'nope.duckdb'}; run `tracelab ingest` first\n")


# ---------------------------------------------------------------- check --baseline

BASELINE_SUITE = """
- id: c
  assertions: [{id: looks-up, type: trace_must_call_tool, tool: lookup}]
"""


def _store_of(tmp_path: Path, name: str, runs: int, failing: int, offered: bool = True) -> str:
    """A store of `runs` runs of case c offering lookup (or no tool); the first `failing` do not call it."""
    path = tmp_path / f"{name}.duckdb"
    folder = tmp_path / name
    folder.mkdir()
    with open_store(path) as store:
        Checker(store, folder).ingest(*[ep(f"{name}-{i:02d}", *([] if i < failing else call("lookup")),
                                           tools=TOOLS if offered else []) for i in range(runs)])
    return str(path)


def test_export_then_compare_a_significant_drop_fails_the_check(capsys, tmp_path):
    suite = tmp_path / "suite.yaml"
    suite.write_text(HEAD + "cases:\n" + BASELINE_SUITE.lstrip("\n"), encoding="utf-8")
    good = _store_of(tmp_path, "good", 40, 0)
    worse = _store_of(tmp_path, "worse", 40, 6)
    baseline = tmp_path / "baseline.json"
    exported = tracelab(capsys, "check", str(suite), "--store", good, "--no-save",
                        "--export-baseline", str(baseline))
    assert exported[0] == 0
    entries = {e["assertion"]: e for e in json.loads(baseline.read_text())["assertions"]}
    assert entries["looks-up"] == {"case": "c", "assertion": "looks-up", "type": "trace_must_call_tool",
                                   "runs": 40, "passed": 40, "pass_rate": 1.0,
                                   "exercised": {"yes": 40, "no": 0, "unknown": 0}, "exercised_rate": 1.0}

    code, out, _ = tracelab(capsys, "check", str(suite), "--store", worse, "--no-save",
                            "--baseline", str(baseline))
    assert code == 1
    tail = out.splitlines()[-2:]
    assert tail[0] == f"  baseline  {baseline}: 3 assertions compared, 1 regression, 0 warnings"
    # z = 0.15 / sqrt(0.925 * 0.075 * (1/40 + 1/40)) = 2.547; interval 0.15 +- 1.645 * sqrt(0.85 * 0.15 / 40)
    assert tail[1] == ("  REGRESSED c  looks-up  pass_rate_regressed: pass rate 100.0% (40/40) in the "
                       "baseline, 85.0% (34/40) now: a drop of 15.0 points, z = 2.55 > 1.645; "
                       "90% interval of the drop 5.7 to 24.3 points")

    code, out, _ = tracelab(capsys, "check", str(suite), "--store", worse, "--no-save",
                            "--baseline", str(baseline), "--format", "json")
    document = json.loads(out)
    assert code == 1
    assert document["baseline"]["regressed"] is True
    assert [(f["kind"], f["severity"], f["assertion"]) for f in document["baseline"]["findings"]] == [
        ("pass_rate_regressed", "failure", "looks-up")]


def test_a_significant_drop_alone_fails_a_check_whose_cases_pass(capsys, tmp_path):
    # min_pass_rate 0.8: the worse store's 34/40 passes its case, so only the baseline can fail it
    suite = tmp_path / "suite.yaml"
    suite.write_text(HEAD + "cases:\n" + BASELINE_SUITE.lstrip("\n") + "  min_pass_rate: 0.8\n",
                     encoding="utf-8")
    good = _store_of(tmp_path, "good", 40, 0)
    worse = _store_of(tmp_path, "worse", 40, 6)
    baseline = tmp_path / "baseline.json"
    assert tracelab(capsys, "check", str(suite), "--store", good, "--no-save",
                    "--export-baseline", str(baseline))[0] == 0
    code, out, _ = tracelab(capsys, "check", str(suite), "--store", worse, "--no-save")
    assert (code, out.splitlines()[0]) == (0, "engine-test: 1/1 case passed, 34/40 runs")
    code, out, _ = tracelab(capsys, "check", str(suite), "--store", worse, "--no-save",
                            "--baseline", str(baseline))
    assert (code, out.splitlines()[0]) == (1, "engine-test: 1/1 case passed, 34/40 runs")
    assert out.splitlines()[-2] == f"  baseline  {baseline}: 3 assertions compared, 1 regression, 0 warnings"


def test_a_coverage_regression_warns_without_failing(capsys, tmp_path):
    # the guard is exercised while lookup is offered (by availability, whatever args_match says);
    # on runs offered no tool neither it nor the write check can fail
    suite = tmp_path / "suite.yaml"
    suite.write_text(HEAD + "cases:\n- id: c\n  assertions: [{id: no-ghost, type: trace_must_not_call_tool, "
                     "tool: {tool: lookup, args_match: {q: x}}}]\n", encoding="utf-8")
    offered = _store_of(tmp_path, "offered", 5, 5)
    gone = _store_of(tmp_path, "gone", 5, 5, offered=False)
    baseline = tmp_path / "baseline.json"
    tracelab(capsys, "check", str(suite), "--store", offered, "--no-save", "--export-baseline", str(baseline))
    code, out, _ = tracelab(capsys, "check", str(suite), "--store", gone, "--no-save", "--baseline", str(baseline))
    assert code == 0
    assert out.splitlines()[-3:] == [
        f"  baseline  {baseline}: 3 assertions compared, 0 regressions, 2 warnings",
        "  warn      c  undeclared_writes  coverage_regressed: exercised in 5 of 5 baseline runs, "
        "in none of its 5 runs now (every offered tool and every call is read-only)",
        "  warn      c  no-ghost  coverage_regressed: exercised in 5 of 5 baseline runs, "
        'in none of its 5 runs now ("lookup" was not offered)',
    ]


def test_a_missing_baseline_file_is_exit_2(capsys, tmp_path, corpus):
    checker, store = corpus
    code, _, err = tracelab(capsys, "check", str(checker.suite_path(SUITE)), "--store", store,
                            "--baseline", str(tmp_path / "nope.json"))
    assert (code, err) == (2, f"error: {tmp_path / 'nope.json'}: no such baseline file; write one with "
                              "`tracelab check SUITE --export-baseline FILE`\n")
