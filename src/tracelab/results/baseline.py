"""Baselines: a check's pass and exercised counts per case and assertion, saved and compared.

`check --export-baseline FILE` writes `baseline_document(run)`; `check --baseline FILE`
compares the current check with it (`compare`):

- a drop in an assertion's pass rate is a regression, and fails the check, only when
  it is statistically significant: a one-sided two-proportion z-test (pooled standard
  error) at the 95% level, i.e. z > 1.645. The reported interval of the drop is the
  two-sided 90% Wald interval (unpooled), whose lower end is the one-sided 95% bound;
- an assertion exercised in some baseline run and in no run now (every current run
  `exercised = no`, or no run selected) is `coverage_regressed`: a warning;
- an assertion on one side only, a side without runs, or a field missing or malformed
  on either side is no evidence: that comparison is skipped, never a regression.
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from statistics import NormalDist
from typing import TYPE_CHECKING, Any, Literal

from tracelab.errors import UsageError
from tracelab.limits import read_capped
from tracelab.words import plural

if TYPE_CHECKING:
    from tracelab.results.check import CheckRun

FORMAT = "tracelab-baseline/1"
ALPHA = 0.05
Z_CRITICAL = NormalDist().inv_cdf(1 - ALPHA)
"""1.645: a one-sided test at 95%."""
TEST = ("one-sided two-proportion z-test (pooled standard error), alpha 0.05: a pass-rate drop is "
        f"significant when z > {Z_CRITICAL:.3f}; interval: 90% two-sided Wald interval of the drop")

RegressionKind = Literal["pass_rate_regressed", "coverage_regressed"]


@dataclass(frozen=True)
class DropTest:
    """The z-test of a pass-rate drop (baseline rate minus current rate)."""

    drop: float
    z: float
    low: float
    high: float

    @property
    def significant(self) -> bool:
        return self.z > Z_CRITICAL


def drop_test(passed_before: int, runs_before: int, passed_now: int, runs_now: int) -> DropTest:
    """One-sided two-proportion z-test of `passed_before/runs_before > passed_now/runs_now`.

    Both run counts must be positive. When both sides pass everything (or nothing)
    the pooled standard error is 0 and so is z: equal rates are no evidence of a drop.
    """
    before, now = passed_before / runs_before, passed_now / runs_now
    drop = before - now
    pooled = (passed_before + passed_now) / (runs_before + runs_now)
    se_pooled = math.sqrt(pooled * (1 - pooled) * (1 / runs_before + 1 / runs_now))
    z = drop / se_pooled if se_pooled > 0 else 0.0
    half = Z_CRITICAL * math.sqrt(before * (1 - before) / runs_before + now * (1 - now) / runs_now)
    return DropTest(drop, z, drop - half, drop + half)


@dataclass(frozen=True)
class Regression:
    """One baseline finding for one case and assertion."""

    kind: RegressionKind
    case: str
    assertion: str
    type: str
    reason: str
    baseline: dict[str, Any]
    """runs, passed, exercised_yes of the baseline entry."""
    current: dict[str, Any]
    test: DropTest | None = None
    """The z-test, for `pass_rate_regressed`."""

    @property
    def fails(self) -> bool:
        """A significant pass-rate drop fails the check; a coverage regression only warns."""
        return self.kind == "pass_rate_regressed"

    def to_json_dict(self) -> dict[str, Any]:
        row: dict[str, Any] = {"kind": self.kind, "severity": "failure" if self.fails else "warning",
                               "case": self.case, "assertion": self.assertion, "type": self.type,
                               "reason": self.reason, "baseline": self.baseline, "current": self.current}
        if self.test is not None:
            row.update(drop=self.test.drop, z=self.test.z, interval=[self.test.low, self.test.high])
        return row


@dataclass(frozen=True)
class Comparison:
    """The current check against a baseline file."""

    path: str
    suite_sha256: str | None
    same_suite: bool
    compared: int
    """Assertions present on both sides (with the same type)."""
    only_baseline: int
    only_current: int
    findings: tuple[Regression, ...]

    @property
    def regressed(self) -> bool:
        """True when a pass rate dropped significantly: the check exits 1."""
        return any(finding.fails for finding in self.findings)

    def to_json_dict(self) -> dict[str, Any]:
        """The `baseline` key of `check --format json`."""
        return {"path": self.path, "suite_sha256": self.suite_sha256, "same_suite": self.same_suite,
                "test": TEST, "compared": self.compared, "only_in_baseline": self.only_baseline,
                "only_now": self.only_current, "regressed": self.regressed,
                "findings": [finding.to_json_dict() for finding in self.findings]}

    def render_text(self) -> str:
        """Lines for the end of the text report."""
        failures = sum(f.fails for f in self.findings)
        warnings = len(self.findings) - failures
        outcome = f"{failures} regression{'' if failures == 1 else 's'}, " \
                  f"{warnings} warning{'' if warnings == 1 else 's'}" if self.findings else "no regression"
        lines = [f"  baseline  {self.path}: {plural(self.compared, 'assertion')} compared, {outcome}"]
        if not self.same_suite:
            lines.append("  note  the suite changed since the baseline: assertions are matched by case and id")
        if self.only_baseline or self.only_current:
            lines.append(f"  note  {self.only_baseline} only in the baseline, {self.only_current} only now: "
                         "not compared (no evidence either way)")
        for finding in self.findings:
            mark = "REGRESSED" if finding.fails else "warn     "
            lines.append(f"  {mark} {finding.case}  {finding.assertion}  {finding.kind}: {finding.reason}")
        return "\n".join(lines) + "\n"


def baseline_document(run: CheckRun) -> dict[str, Any]:
    """What `--export-baseline` writes: per case and assertion, runs, pass and exercised counts and rates."""
    from tracelab.results.cover import Coverage
    from tracelab.version import __version__

    entries = [
        {"case": row["case_id"], "assertion": row["assertion_id"], "type": row["assertion_type"],
         "runs": row["runs"], "passed": row["passed"],
         "pass_rate": row["passed"] / row["runs"] if row["runs"] else None,
         "exercised": {"yes": row["exercised_yes"], "no": row["exercised_no"],
                       "unknown": row["exercised_unknown"]},
         "exercised_rate": row["exercised_rate"]}
        for row in Coverage(run).table.sort("case_id", "assertion_id").iter_rows(named=True)
    ]
    return {"format": FORMAT, "tracelab_version": __version__, "suite": run.suite.name,
            "suite_sha256": run.suite.sha256, "run_id": run.run_id,
            "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "assertions": entries}


def export_baseline(run: CheckRun, path: str | os.PathLike[str]) -> None:
    """Write the baseline of `run` to `path` as JSON.

    Raises:
        UsageError: the file cannot be written.
    """
    from tracelab.outputs import write_file
    from tracelab.results.report import indented_json

    write_file(path, indented_json(baseline_document(run)), "the baseline")


def load_baseline(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a baseline file written by `--export-baseline`.

    Raises:
        UsageError: the file is missing, not JSON, or has no `assertions` list.
    """
    if not Path(path).exists():
        raise UsageError(f"{path}: no such baseline file; write one with "
                         "`tracelab check SUITE --export-baseline FILE`")
    try:
        text = read_capped(path, "the baseline").decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: cannot read the baseline: {exc}") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}: line {exc.lineno}: not JSON ({exc.msg})") from None
    except RecursionError:
        raise UsageError(f"{path}: not a tracelab baseline (JSON nested too deep to read)") from None
    if not isinstance(document, dict) or not isinstance(document.get("assertions"), list):
        raise UsageError(f"{path}: not a tracelab baseline (no `assertions` list); write one with "
                         "`tracelab check SUITE --export-baseline FILE`")
    return document


def compare(baseline: dict[str, Any], run: CheckRun, path: str | os.PathLike[str]) -> Comparison:
    """Compare the check `run` with a loaded baseline (see the module docstring for the rules)."""
    from tracelab.results.cover import Coverage

    before: dict[tuple[str, str], dict[str, Any]] = {}
    for entry in baseline["assertions"]:
        if isinstance(entry, dict) and isinstance(entry.get("case"), str) \
                and isinstance(entry.get("assertion"), str):
            before.setdefault((entry["case"], entry["assertion"]), entry)
    now = {(row["case_id"], row["assertion_id"]): row for row in Coverage(run).table.iter_rows(named=True)}
    findings: list[Regression] = []
    compared = 0
    for key, row in now.items():
        entry = before.get(key)
        if entry is None or entry.get("type", row["assertion_type"]) != row["assertion_type"]:
            continue
        compared += 1
        findings.extend(_regressions(entry, row))
    sha = baseline.get("suite_sha256") if isinstance(baseline.get("suite_sha256"), str) else None
    return Comparison(str(path), sha, sha == run.suite.sha256, compared, len(before) - compared,
                      len(now) - compared, tuple(findings))


def _regressions(entry: dict[str, Any], row: dict[str, Any]) -> list[Regression]:
    exercised = entry.get("exercised")
    base = {"runs": _count(entry, "runs"), "passed": _count(entry, "passed"),
            "exercised_yes": _count(exercised, "yes") if isinstance(exercised, dict) else None}
    current = {"runs": row["runs"], "passed": row["passed"], "exercised_yes": row["exercised_yes"]}

    def found(kind: RegressionKind, reason: str, test: DropTest | None = None) -> Regression:
        return Regression(kind, row["case_id"], row["assertion_id"], row["assertion_type"], reason,
                          base, current, test)

    out: list[Regression] = []
    runs, passed = base["runs"], base["passed"]
    if runs and passed is not None and passed <= runs and row["runs"]:
        test = drop_test(passed, runs, row["passed"], row["runs"])
        if test.significant:
            out.append(found("pass_rate_regressed",
                             f"pass rate {passed / runs:.1%} ({passed}/{runs}) in the baseline, "
                             f"{row['passed'] / row['runs']:.1%} ({row['passed']}/{row['runs']}) now: "
                             f"a drop of {test.drop * 100:.1f} points, z = {test.z:.2f} > {Z_CRITICAL:.3f}; "
                             f"90% interval of the drop {test.low * 100:.1f} to {test.high * 100:.1f} points",
                             test))
    yes = base["exercised_yes"]
    if yes and row["exercised_yes"] == 0 and row["exercised_unknown"] == 0:
        of = f" of {runs}" if runs is not None else ""
        if row["runs"] == 0:
            now = "in no run now: the case selects no run"
        else:
            top = row["not_exercised_reasons"][0]["reason"] if row["not_exercised_reasons"] else None
            now = ("not in its one run now" if row["runs"] == 1 else f"in none of its {row['runs']} runs now") \
                + (f" ({top})" if top else "")
        out.append(found("coverage_regressed", f"exercised in {yes}{of} baseline runs, {now}"))
    return out


def _count(mapping: dict[str, Any], key: str) -> int | None:
    """A non-negative integer field, or None when it is missing or malformed (no evidence)."""
    value = mapping.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value


__all__ = ["ALPHA", "FORMAT", "TEST", "Z_CRITICAL", "Comparison", "DropTest", "Regression", "baseline_document",
           "compare", "drop_test", "export_baseline", "load_baseline"]
