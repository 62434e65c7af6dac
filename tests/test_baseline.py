"""Baselines (tracelab.results.baseline): the z-test, what is a regression, and what is no evidence."""
from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import pytest

from tests.suite.engine_support import HEAD, Checker, call, ep
from tracelab.errors import UsageError
from tracelab.results.baseline import Z_CRITICAL, baseline_document, compare, drop_test, export_baseline, load_baseline
from tracelab.results.check import CheckRun, check
from tracelab.store import open_store

TOOLS = [{"name": "lookup", "effect": "read"}, {"name": "save", "effect": "write"}]
SUITE = """\
cases:
- id: c
  assertions:
    - {id: looks-up, type: trace_must_call_tool, tool: lookup}
    - {id: no-ghost, type: trace_must_not_call_tool, tool: ghost}
"""


# the same ids, but no-ghost guards a tool every run is offered (exercised = yes by availability)
GUARDING_LOOKUP = SUITE.replace("tool: ghost}", "tool: {tool: lookup, args_match: {q: '^never$'}}}")


def check_of(tmp_path: Path, name: str, runs: int, failing: int, suite: str = SUITE) -> CheckRun:
    """Check `suite` over `runs` runs of case c offering lookup; the first `failing` do not call it."""
    folder = tmp_path / name
    folder.mkdir()
    suite_path = folder / "suite.yaml"
    suite_path.write_text(HEAD + suite, encoding="utf-8")
    with open_store(folder / "store.duckdb") as store:
        Checker(store, folder).ingest(*[ep(f"{name}-{i:03d}", *([] if i < failing else call("lookup")),
                                           tools=TOOLS) for i in range(runs)])
        return check(store, suite_path, save=False)


def kinds(comparison) -> list[tuple[str, str]]:
    return [(f.kind, f.assertion) for f in comparison.findings]


# ---------------------------------------------------------------- the test itself

def test_critical_value_is_one_sided_95_percent():
    assert Z_CRITICAL == pytest.approx(1.6449, abs=1e-4)


def test_drop_test_by_hand():
    # 100/100 then 90/100: pooled 0.95, se0 = sqrt(0.95 * 0.05 * 0.02) = 0.030822, z = 0.1 / se0
    result = drop_test(100, 100, 90, 100)
    assert result.drop == pytest.approx(0.10)
    assert result.z == pytest.approx(0.1 / math.sqrt(0.95 * 0.05 * 0.02))
    assert result.z == pytest.approx(3.244, abs=1e-3)
    # unpooled se = sqrt(0 + 0.9 * 0.1 / 100) = 0.03; 90% interval 0.1 +- 1.645 * 0.03
    assert (result.low, result.high) == (pytest.approx(0.1 - Z_CRITICAL * 0.03), pytest.approx(0.1 + Z_CRITICAL * 0.03))
    assert result.significant


def test_noise_is_not_significant():
    assert not drop_test(100, 100, 99, 100).significant   # z = 1.00
    assert not drop_test(10, 10, 9, 10).significant       # z = 1.03
    assert not drop_test(1, 1, 0, 1).significant          # z = 1.41: one run proves little


def test_equal_rates_and_rises_are_never_significant():
    assert drop_test(20, 20, 20, 20).z == 0.0             # pooled standard error 0
    assert drop_test(0, 20, 0, 20).z == 0.0
    assert drop_test(10, 20, 20, 20).z < 0


# ---------------------------------------------------------------- comparing checks

def test_a_significant_drop_is_a_failing_regression(tmp_path):
    before = check_of(tmp_path, "before", 50, 0)
    now = check_of(tmp_path, "now", 50, 8)                # 100% -> 84%
    comparison = compare(baseline_document(before), now, "b.json")
    assert kinds(comparison) == [("pass_rate_regressed", "looks-up")]
    finding = comparison.findings[0]
    assert finding.fails and comparison.regressed
    assert finding.baseline == {"runs": 50, "passed": 50, "exercised_yes": 50}
    assert finding.current == {"runs": 50, "passed": 42, "exercised_yes": 50}
    assert finding.test.drop == pytest.approx(0.16)
    assert finding.test.z == pytest.approx(0.16 / math.sqrt(0.92 * 0.08 * (2 / 50)))
    assert comparison.compared == 4 and comparison.same_suite


def test_noise_between_checks_is_not_flagged(tmp_path):
    before = check_of(tmp_path, "before", 50, 0)
    now = check_of(tmp_path, "now", 50, 1)                # 100% -> 98%: z = 1.01
    comparison = compare(baseline_document(before), now, "b.json")
    assert comparison.findings == ()
    assert not comparison.regressed
    assert comparison.render_text() == "  baseline  b.json: 4 assertions compared, no regression\n"


def test_lost_coverage_warns_and_does_not_fail(tmp_path):
    before = check_of(tmp_path, "before", 5, 0, GUARDING_LOOKUP)  # lookup is offered: the guard is exercised
    document = baseline_document(before)
    guard = next(e for e in document["assertions"] if e["assertion"] == "no-ghost")
    assert guard["exercised"] == {"yes": 5, "no": 0, "unknown": 0}
    now = check_of(tmp_path, "now", 5, 0)                 # the guard is now about "ghost", never offered
    comparison = compare(document, now, "b.json")
    assert kinds(comparison) == [("coverage_regressed", "no-ghost")]
    assert not comparison.regressed
    assert comparison.findings[0].reason == ('exercised in 5 of 5 baseline runs, in none of its 5 runs now '
                                             '("ghost" was not offered)')


@pytest.mark.parametrize("edit", [
    lambda e: e.pop("passed"),
    lambda e: e.pop("runs"),
    lambda e: e.update(runs=None),
    lambda e: e.update(passed="50"),
    lambda e: e.update(runs=0, passed=0),
    lambda e: e.update(passed=60),                        # more passes than runs: malformed
])
def test_a_missing_or_malformed_pass_field_is_no_evidence(tmp_path, edit):
    before = check_of(tmp_path, "before", 50, 0)
    now = check_of(tmp_path, "now", 50, 25)               # would be a huge drop
    document = baseline_document(before)
    edit(next(e for e in document["assertions"] if e["assertion"] == "looks-up"))
    assert kinds(compare(document, now, "b.json")) == []


def test_a_missing_exercised_field_is_no_evidence(tmp_path):
    before = check_of(tmp_path, "before", 5, 0)
    now = check_of(tmp_path, "now", 5, 0)
    document = baseline_document(before)
    for entry in document["assertions"]:
        entry.pop("exercised")
        entry["exercised_rate"] = 1.0                     # a rate alone is not a count: ignored
    guard = next(e for e in document["assertions"] if e["assertion"] == "no-ghost")
    guard["exercised"] = {"yes": "5"}
    assert kinds(compare(document, now, "b.json")) == []


def test_assertions_on_one_side_only_are_not_compared(tmp_path):
    before = check_of(tmp_path, "before", 20, 0)
    now = check_of(tmp_path, "now", 20, 20, SUITE + "    - {id: new-one, type: tool_status, tool: lookup}\n")
    document = baseline_document(before)
    document["assertions"] = [e for e in document["assertions"] if e["assertion"] != "looks-up"]
    document["assertions"].append({"case": "gone", "assertion": "old", "type": "tool_status", "runs": 9,
                                   "passed": 9})
    document["assertions"].append({"note": "not an entry"})
    comparison = compare(document, now, "b.json")
    assert kinds(comparison) == []                        # looks-up dropped to 0%, but has no baseline
    assert (comparison.compared, comparison.only_baseline, comparison.only_current) == (3, 1, 2)
    assert not comparison.same_suite
    assert comparison.render_text().splitlines()[1:] == [
        "  note  the suite changed since the baseline: assertions are matched by case and id",
        "  note  1 only in the baseline, 2 only now: not compared (no evidence either way)",
    ]


def test_an_assertion_whose_type_changed_is_not_compared(tmp_path):
    before = check_of(tmp_path, "before", 20, 0)
    now = check_of(tmp_path, "now", 20, 20)
    document = copy.deepcopy(baseline_document(before))
    next(e for e in document["assertions"] if e["assertion"] == "looks-up")["type"] = "tool_status"
    assert kinds(compare(document, now, "b.json")) == []


def test_a_case_without_runs_now_loses_its_coverage(tmp_path):
    before = check_of(tmp_path, "before", 5, 0)
    now = check_of(tmp_path, "now", 5, 0, SUITE.replace("- id: c\n", "- id: c\n  select: {agent: nobody}\n"
                                                        "  allow_no_runs: true\n"))
    comparison = compare(baseline_document(before), now, "b.json")
    assert kinds(comparison) == [("coverage_regressed", "must_not_leak[0]"),
                                 ("coverage_regressed", "undeclared_writes"),
                                 ("coverage_regressed", "looks-up")]
    assert comparison.findings[0].reason == "exercised in 5 of 5 baseline runs, in no run now: the case selects no run"


# ---------------------------------------------------------------- files

def test_export_and_load_round_trip(tmp_path):
    run = check_of(tmp_path, "before", 3, 1)
    export_baseline(run, tmp_path / "b.json")
    document = load_baseline(tmp_path / "b.json")
    assert document["format"] == "tracelab-baseline/1"
    assert document["suite_sha256"] == run.suite.sha256
    assert [(e["case"], e["assertion"], e["runs"], e["passed"], e["pass_rate"]) for e in document["assertions"]] == [
        ("c", "looks-up", 3, 2, pytest.approx(2 / 3)), ("c", "must_not_leak[0]", 3, 3, 1.0),
        ("c", "no-ghost", 3, 3, 1.0), ("c", "undeclared_writes", 3, 3, 1.0)]


@pytest.mark.parametrize(("text", "message"), [
    ("{not json", "line 1: not JSON (Expecting property name enclosed in double quotes)"),
    ("[1, 2]", "not a tracelab baseline (no `assertions` list)"),
    (json.dumps({"assertions": {}}), "not a tracelab baseline (no `assertions` list)"),
])
def test_a_bad_baseline_file_is_a_usage_error(tmp_path, text, message):
    path = tmp_path / "b.json"
    path.write_text(text)
    with pytest.raises(UsageError) as info:
        load_baseline(path)
    assert str(info.value).startswith(f"{path}: {message}")


def test_export_to_a_missing_folder_is_a_usage_error(tmp_path):
    run = check_of(tmp_path, "before", 1, 0)
    with pytest.raises(UsageError) as info:
        export_baseline(run, tmp_path / "missing" / "b.json")
    assert str(info.value) == f"{tmp_path / 'missing' / 'b.json'}: cannot write the baseline: No such file or directory"
