"""What `tracelab check` produces: verdict rows, case verdicts and summary counts.

Rendering (text, JSON envelope, JUnit) and saving to `check_results` build on
`CheckResult`; this module only computes (docs/suites.md §5, docs/cli.md).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import polars as pl

from tracelab.suite.model import Case

STEP_IDX = pl.Int32
"""The dtype of `step_idx` in verdict frames (`check_results.step_idx` is an INTEGER)."""

PERMISSION_TYPES = ("must_not_leak", "must_not_write", "undeclared_writes")
"""A failed result of these types fails its case whatever min_pass_rate says."""

@dataclass(frozen=True)
class CaseVerdict:
    """One case's verdict: its selected runs, how many passed, and whether the case passed."""

    id: str
    category: str | None
    runs: int
    runs_passed: int
    pass_rate: float | None
    """runs_passed / runs; None when the case selected no run."""
    min_pass_rate: float
    passed: bool
    permission_failure: bool
    """A must_not_leak, must_not_write or undeclared_writes result failed."""


@dataclass(frozen=True)
class Summary:
    """The summary counts of `check --format json` (docs/cli.md)."""

    cases: int
    cases_passed: int
    runs: int
    """Distinct runs selected by any checked case."""
    runs_passed: int
    """Of those, the runs that passed every result of every case selecting them."""
    results: int
    failed: int
    not_exercised: int
    unknown: int


@dataclass(frozen=True)
class CheckResult:
    """Everything a check found.

    Attributes:
        suite: the suite's name.
        verdicts: one row per (case, assertion, run): case_id, assertion_id,
            assertion_type, episode_id, passed, exercised (yes/no/unknown), reason, step_idx
            (the step that decides a failure; null on a pass and where the run as a whole
            decides: docs/cli.md §6, docs/suites.md §5).
        cases: the checked cases in suite order.
        summary: the counts over all of them.
        strict: whether a run with an `exercised = no` row counted as failed.
    """

    suite: str
    verdicts: pl.DataFrame
    cases: tuple[CaseVerdict, ...]
    summary: Summary
    per_run: pl.DataFrame
    """`runs_of_cases` of the verdicts (what `check` saves for `view` is found from it)."""
    strict: bool = False

    @property
    def passed(self) -> bool:
        """True when every checked case passed (exit code 0)."""
        return all(case.passed for case in self.cases)

    def reported(self, all_results: bool = False) -> pl.DataFrame:
        """The rows a report lists: failures and `exercised = no` passes, or all of them."""
        if all_results:
            return self.verdicts
        return self.verdicts.filter(~pl.col("passed") | (pl.col("exercised") == "no"))

    def to_json_dict(self, all_results: bool = False) -> dict[str, Any]:
        """`summary`, `cases` and `results` of `check --format json` (no envelope fields)."""
        cases = []
        for case in self.cases:
            row = asdict(case)
            del row["permission_failure"]
            cases.append(row)
        results = [
            {"case": r["case_id"], "assertion": r["assertion_id"], "type": r["assertion_type"],
             "episode_id": r["episode_id"], "passed": r["passed"], "exercised": r["exercised"],
             "reason": r["reason"], "step_idx": r["step_idx"]}
            for r in self.reported(all_results).iter_rows(named=True)
        ]
        return {"summary": asdict(self.summary), "cases": cases, "results": results}


def build_result(suite: str, cases: tuple[Case, ...], verdicts: pl.DataFrame,
                 strict: bool) -> CheckResult:
    """Case verdicts and summary counts from the verdict rows (docs/suites.md §5).

    Every selected run has at least one row (the always-on `undeclared_writes`),
    so the rows alone say which runs each case selected.
    """
    per_run = runs_of_cases(verdicts, strict)
    per_case = {row["case_id"]: row for row in per_run.group_by("case_id").agg(
        runs=pl.len(), runs_passed=pl.col("ok").sum(), permission=pl.col("permission").any(),
    ).iter_rows(named=True)}
    verdict_list = tuple(_case_verdict(case, per_case.get(case.id)) for case in cases)
    runs = per_run.group_by("episode_id").agg(ok=pl.col("ok").all())
    exercised = verdicts["exercised"]
    summary = Summary(
        cases=len(verdict_list),
        cases_passed=sum(case.passed for case in verdict_list),
        runs=runs.height,
        runs_passed=int(runs["ok"].sum()),
        results=verdicts.height,
        failed=int((~verdicts["passed"]).sum()),
        not_exercised=int((exercised == "no").sum()),
        unknown=int((exercised == "unknown").sum()),
    )
    return CheckResult(suite, verdicts, verdict_list, summary, per_run, strict)


def runs_of_cases(verdicts: pl.DataFrame, strict: bool = False) -> pl.DataFrame:
    """One row per (case, run) the case selected: case_id, episode_id; `ok`, whether the run passed
    every result of the case (with `strict`, none of them `exercised = no` either); `permission`,
    whether it failed a permission result (docs/suites.md §5); `failed`, how many results it failed."""
    run_ok = pl.col("passed")
    if strict:
        run_ok = run_ok & (pl.col("exercised") != "no")
    return verdicts.group_by("case_id", "episode_id").agg(
        ok=run_ok.all(),
        permission=(~pl.col("passed") & pl.col("assertion_type").is_in(PERMISSION_TYPES)).any(),
        failed=(~pl.col("passed")).sum(),
    )


def _case_verdict(case: Case, counts: dict[str, Any] | None) -> CaseVerdict:
    if counts is None:
        return CaseVerdict(case.id, case.category, 0, 0, None, case.min_pass_rate,
                           case.allow_no_runs, False)
    runs, runs_passed = counts["runs"], int(counts["runs_passed"])
    # a relative tolerance, so that 99 of 100 runs meet 0.99 despite floating point
    needed = case.min_pass_rate * runs
    enough = runs_passed >= needed - 1e-9 * max(1.0, needed)
    return CaseVerdict(case.id, case.category, runs, runs_passed, runs_passed / runs,
                       case.min_pass_rate, enough and not counts["permission"],
                       bool(counts["permission"]))


__all__ = ["PERMISSION_TYPES", "STEP_IDX", "CaseVerdict", "CheckResult", "Summary", "build_result", "runs_of_cases"]
