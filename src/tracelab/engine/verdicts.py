"""What `tracelab check` produces: verdict rows, case verdicts and summary counts.

Rendering (text, JSON envelope, JUnit) and saving to `check_results` build on
`CheckResult`; this module only computes (docs/suites.md §5, docs/cli.md).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import cached_property
from typing import Any, TypeVar

import polars as pl

from tracelab.engine.columns import RESULT_COLUMNS
from tracelab.engine.severity import OTHER_SEVERITY, PERMISSION_TYPES, SEVERITY
from tracelab.suite.model import Case

FrameT = TypeVar("FrameT", pl.DataFrame, pl.LazyFrame)

STEP_IDX = pl.Int32
"""The dtype of `step_idx` in verdict frames (`check_results.step_idx` is an INTEGER)."""

EXAMPLES = 3
"""Example runs each failing assertion shows in the reports (JSON `results` lists them all)."""

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
    permission_families: tuple[str, ...] = ()
    """Which of those types failed, in severity order (what the reports name)."""


@dataclass(frozen=True)
class Example:
    """One failing run of an assertion, as the reports show it."""

    episode_id: str
    step_idx: int | None
    reason: str | None
    also: tuple[str, ...]
    """The other assertions this same failure fails: a `must_not_write[i]` and `undeclared_writes`
    failing at the same step are one executed write, listed once (under `must_not_write[i]`)."""


@dataclass(frozen=True)
class FailedAssertion:
    """One assertion of one case with at least one failing run: how many, and a few of them.

    Attributes:
        case_id, assertion_id, assertion_type: which assertion.
        severity: its rank (`SEVERITY`; 4 for types that are no permission check).
        failed_runs: the case's runs that failed it.
        same_write: per other assertion, the runs where this failure is that one's executed write
            (`must_not_write[i]` <-> `undeclared_writes`); those runs are listed under
            `must_not_write[i]` only.
        examples: up to `EXAMPLES` failing runs in verdict order, of those listed here.
        listed: failing runs listed here (`failed_runs` less those listed under another assertion).
    """

    case_id: str
    assertion_id: str
    assertion_type: str
    severity: int
    failed_runs: int
    same_write: tuple[tuple[str, int], ...]
    examples: tuple[Example, ...]
    listed: int


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

    A check's verdict rows are one per (case, assertion, run the case selected); most are plain
    passes (passed, exercised `yes`, no reason, no step: 82 % at 100k runs of
    benchmarks/suite.yaml). The result holds the others (`notable`) and what the plain passes
    follow from (`selection` times `units`); `verdicts` builds every row when asked.

    Attributes:
        suite: the suite's name.
        notable: the rows that are not plain passes (`NOT_PLAIN_PASS`), in verdict order:
            case_id, assertion_id, assertion_type, episode_id, passed, exercised (yes/no/unknown),
            reason, step_idx (the step that decides a failure; null on a pass and where the run as
            a whole decides: docs/cli.md §6, docs/suites.md §5).
        selection: (case_id, episode_id), the runs each checked case selected.
        units: (case_id, assertion_id, assertion_type), each checked case's results in suite order.
        cases: the checked cases in suite order.
        summary: the counts over all of them.
        per_run: `runs_of_cases` of the failing rows (with `strict`, and the `exercised = no`
            ones): the (case, run) pairs that did not pass every result of the case.
        strict: whether a run with an `exercised = no` row counted as failed.
        carried: how many of the first notable rows and of the first selection rows an earlier
            check found (`check --since`): (0, 0) for a full check.
        runs_failed: the runs that failed a result of a case selecting them (`check_runs.runs_failed`).
    """

    suite: str
    notable: pl.DataFrame
    selection: pl.DataFrame
    units: pl.DataFrame
    cases: tuple[CaseVerdict, ...]
    summary: Summary
    per_run: pl.DataFrame
    strict: bool = False
    carried: tuple[int, int] = (0, 0)
    runs_failed: int = 0

    @cached_property
    def verdicts(self) -> pl.DataFrame:
        """Every verdict row, by assertion (in suite order), then run: the notable rows and the
        plain passes of the selection (`expand`)."""
        return expand(self.notable, self.selection, self.units, self.carried[1])

    @property
    def passed(self) -> bool:
        """True when every checked case passed (exit code 0)."""
        return all(case.passed for case in self.cases)

    def reported(self, all_results: bool = False) -> pl.DataFrame:
        """The rows a report lists: failures and `exercised = no` passes, or all of them."""
        if all_results:
            return self.verdicts
        return self.notable.filter(~pl.col("passed") | (pl.col("exercised") == "no"))

    def failed_assertions(self, examples: int | None = EXAMPLES) -> list[FailedAssertion]:
        """Every failing assertion of every case, in report order, with `examples` runs each
        (None: all of them; `failed_assertions`)."""
        return failed_assertions(self.notable, [case.id for case in self.cases], examples)

    def to_json_dict(self, all_results: bool = False) -> dict[str, Any]:
        """`summary`, `cases`, `failures` and `results` of `check --format json` (no envelope fields)."""
        cases = []
        for case in self.cases:
            row = asdict(case)
            del row["permission_failure"], row["permission_families"]
            row["permission_failures"] = list(case.permission_families)
            cases.append(row)
        failures = [
            {"case": f.case_id, "assertion": f.assertion_id, "type": f.assertion_type, "severity": f.severity,
             "failed_runs": f.failed_runs, "same_write": dict(f.same_write),
             "examples": [{"episode_id": e.episode_id, "step_idx": e.step_idx, "reason": e.reason,
                           "also": list(e.also)} for e in f.examples]}
            for f in self.failed_assertions()
        ]
        results = [
            {"case": r["case_id"], "assertion": r["assertion_id"], "type": r["assertion_type"],
             "episode_id": r["episode_id"], "passed": r["passed"], "exercised": r["exercised"],
             "reason": r["reason"], "step_idx": r["step_idx"]}
            for r in self.reported(all_results).iter_rows(named=True)
        ]
        return {"summary": asdict(self.summary), "cases": cases, "failures": failures, "results": results}


def not_plain_pass() -> pl.Expr:
    """`engine.columns.NOT_PLAIN_PASS` in Polars (a NULL `passed` or `exercised` counts as notable)."""
    plain = pl.col("passed") & (pl.col("exercised") == "yes") & pl.col("reason").is_null()
    return ~plain.fill_null(False)


def expand(notable: pl.DataFrame, selection: pl.DataFrame, units: pl.DataFrame, carried: int = 0) -> pl.DataFrame:
    """Every verdict row: each unit of a case times the runs it selected, a plain pass where
    `notable` has no row; by unit (in `units` order), then run. With `check --since`, the rows of
    the first `carried` selection rows (the runs an earlier check found) come first."""
    keys = ["case_id", "assertion_id", "episode_id"]
    ordered = units.with_row_index("unit_pos")
    parts = selection.with_columns(part=pl.int_range(pl.len()) >= carried)
    rows = (ordered.join(parts, on="case_id", how="inner")
            .join(notable.drop("assertion_type"), on=keys, how="left")
            .with_columns(passed=pl.col("passed").fill_null(True),
                          exercised=pl.col("exercised").fill_null("yes"))
            .sort("part", "unit_pos", "episode_id"))
    return rows.select(*RESULT_COLUMNS).cast(RESULT_SCHEMA)


RESULT_SCHEMA = pl.Schema({"case_id": pl.Utf8(), "assertion_id": pl.Utf8(), "assertion_type": pl.Utf8(),
                           "episode_id": pl.Utf8(), "passed": pl.Boolean(), "exercised": pl.Utf8(),
                           "reason": pl.Utf8(), "step_idx": STEP_IDX()})
"""The dtypes of a verdict row's columns (`engine.columns.RESULT_COLUMNS`)."""


def failed_assertions(verdicts: pl.DataFrame, case_order: list[str], examples: int | None = EXAMPLES
                      ) -> list[FailedAssertion]:
    """Group the failed rows by (case, assertion), with `examples` runs each (None: all of them):
    cases in `case_order`, then by severity, most failing runs, and first failing row.

    A `must_not_write[i]` failure and an `undeclared_writes` failure of the same run at the same
    step are one executed write: the run is an example of `must_not_write[i]` (naming
    `undeclared_writes` in `also`) and counted, not listed again, under `undeclared_writes`."""
    failed = verdicts.filter(~pl.col("passed")).with_row_index("order")
    same = _same_writes(failed)
    rows = failed.join(same, on=["case_id", "assertion_id", "episode_id"], how="left")
    listed = ~((pl.col("assertion_type") == "undeclared_writes") & pl.col("also").is_not_null())
    ranks = {case: i for i, case in enumerate(case_order)}
    groups = rows.group_by("case_id", "assertion_id", "assertion_type").agg(
        failed_runs=pl.len(), first=pl.col("order").min(), listed=listed.sum(),
    ).with_columns(
        case_rank=pl.col("case_id").replace_strict(ranks, default=len(ranks), return_dtype=pl.Int64),
        severity=pl.col("assertion_type").replace_strict(SEVERITY, default=OTHER_SEVERITY, return_dtype=pl.Int64),
    ).sort("case_rank", "severity", "failed_runs", "first", descending=[False, False, True, False])
    shown = rows.filter(listed).sort("order")
    if examples is not None:
        shown = shown.group_by("case_id", "assertion_id", maintain_order=True).head(examples)
    by_group: dict[tuple[str, str], list[Example]] = {}
    for r in shown.iter_rows(named=True):
        by_group.setdefault((r["case_id"], r["assertion_id"]), []).append(
            Example(r["episode_id"], r["step_idx"], r["reason"], (r["also"],) if r["also"] else ()))
    counts: dict[tuple[str, str], dict[str, int]] = {}
    for r in rows.filter(pl.col("also").is_not_null()).group_by("case_id", "assertion_id", "also").len().sort(
            "also").iter_rows(named=True):
        counts.setdefault((r["case_id"], r["assertion_id"]), {})[r["also"]] = r["len"]
    return [FailedAssertion(g["case_id"], g["assertion_id"], g["assertion_type"], g["severity"], g["failed_runs"],
                            tuple(counts.get((g["case_id"], g["assertion_id"]), {}).items()),
                            tuple(by_group.get((g["case_id"], g["assertion_id"]), ())), g["listed"])
            for g in groups.iter_rows(named=True)]


def _same_writes(failed: FrameT) -> FrameT:
    """(case_id, assertion_id, episode_id, also): a `must_not_write[i]` and an `undeclared_writes`
    failure of one run located at the same step, each naming the other in `also` (when several
    `must_not_write` entries name that step, the first of them)."""
    keys = ["case_id", "episode_id", "step_idx"]
    forbidden = failed.filter(pl.col("assertion_type") == "must_not_write", pl.col("step_idx").is_not_null())
    undeclared = failed.filter(pl.col("assertion_type") == "undeclared_writes", pl.col("step_idx").is_not_null())
    pairs = (undeclared.select(*keys, undeclared_id="assertion_id")
             .join(forbidden.select(*keys, "order", forbidden_id="assertion_id"), on=keys)
             .sort("order").unique(["case_id", "episode_id", "step_idx"], keep="first", maintain_order=True))
    return pl.concat([
        pairs.select("case_id", pl.col("forbidden_id").alias("assertion_id"), "episode_id",
                     pl.col("undeclared_id").alias("also")),
        pairs.select("case_id", pl.col("undeclared_id").alias("assertion_id"), "episode_id",
                     pl.col("forbidden_id").alias("also")),
    ])


def build_result(suite: str, cases: tuple[Case, ...], verdicts: pl.DataFrame,
                 strict: bool) -> CheckResult:
    """Case verdicts and summary counts from every verdict row (docs/suites.md §5), as a check that
    gave them row by row (`check --engine spark`, a check saved whole) has them.

    Every selected run has at least one row (the always-on `undeclared_writes`),
    so the rows alone say which runs each case selected.
    """
    verdicts = verdicts.select(*RESULT_COLUMNS).cast(RESULT_SCHEMA)
    result = summarize(suite, cases, *compact(verdicts), strict)
    result.__dict__["verdicts"] = verdicts  # the rows as given (`verdicts` is a cached property)
    return result


def compact(verdicts: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """(notable, selection, units) of every verdict row (`CheckResult`'s), each in the rows' order;
    `step_idx` is null when the rows lack it (saved before it existed)."""
    if "step_idx" not in verdicts.columns:
        verdicts = verdicts.with_columns(step_idx=pl.lit(None, STEP_IDX))
    verdicts = verdicts.select(*RESULT_COLUMNS).cast(RESULT_SCHEMA)
    return (verdicts.filter(not_plain_pass()),
            verdicts.select("case_id", "episode_id").unique(maintain_order=True),
            verdicts.select("case_id", "assertion_id", "assertion_type").unique(maintain_order=True))


def summarize(suite: str, cases: tuple[Case, ...], notable: pl.DataFrame, selection: pl.DataFrame,
              units: pl.DataFrame, strict: bool, carried: tuple[int, int] = (0, 0)) -> CheckResult:
    """Case verdicts and summary counts (docs/suites.md §5) from a check's notable rows, the runs each
    case selected and each case's results: a (case, run) pair without a notable row passed every
    result of the case. The counts are one Polars query plan (`collect_all`): its parts run side by
    side and share their scans (at 1M runs 0.20 s against 0.37 s one after another)."""
    failing = ~pl.col("passed") | ((pl.col("exercised") == "no") if strict else pl.lit(False))
    rows, selected_runs = notable.lazy(), selection.lazy()
    per_run = runs_of_cases(rows.filter(failing), strict)
    exercised = pl.col("exercised")
    per_run_rows, selected, per_case, families, runs, failing_runs, runs_failed, counts = pl.collect_all([
        per_run,
        selected_runs.group_by("case_id").len(),
        per_run.group_by("case_id").agg(failing=(~pl.col("ok")).sum(), permission=pl.col("permission").any()),
        rows.filter(~pl.col("passed") & pl.col("assertion_type").is_in(PERMISSION_TYPES))
        .select("case_id", "assertion_type").unique(),
        selected_runs.select(pl.col("episode_id").n_unique()),
        per_run.filter(~pl.col("ok")).select(pl.col("episode_id").n_unique()),
        per_run.filter(pl.col("failed") > 0).select(pl.col("episode_id").n_unique()),
        rows.select(failed=(~pl.col("passed")).sum(), no=(exercised == "no").sum(),
                    unknown=(exercised == "unknown").sum()),
    ])
    selected_by_case = dict(selected.iter_rows())
    per_case_by_id = {row["case_id"]: row for row in per_case.iter_rows(named=True)}
    found: dict[str, set[str]] = {}
    for case_id, kind in families.iter_rows():
        found.setdefault(case_id, set()).add(kind)
    verdict_list = tuple(_case_verdict(case, selected_by_case.get(case.id, 0), per_case_by_id.get(case.id),
                                       tuple(k for k in PERMISSION_TYPES if k in found.get(case.id, ())))
                         for case in cases)
    n_units = dict(units.group_by("case_id").len().iter_rows())
    total, failed_total = runs.item(), failing_runs.item()
    summary = Summary(
        cases=len(verdict_list),
        cases_passed=sum(case.passed for case in verdict_list),
        runs=total,
        runs_passed=total - failed_total,
        results=sum(count * n_units.get(case_id, 0) for case_id, count in selected_by_case.items()),
        failed=int(counts["failed"].item()),
        not_exercised=int(counts["no"].item()),
        unknown=int(counts["unknown"].item()),
    )
    return CheckResult(suite, notable, selection, units, verdict_list, summary, per_run_rows, strict, carried,
                       runs_failed.item())


def runs_of_cases(verdicts: FrameT, strict: bool = False) -> FrameT:
    """One row per (case, run) of the rows (all of them, or the notable ones): case_id, episode_id;
    `ok`, whether the run passed every result of the case (with `strict`, none of them
    `exercised = no` either); `permission`, whether it failed a permission result (docs/suites.md
    §5); `failed`, how many results it failed."""
    run_ok = pl.col("passed")
    if strict:
        run_ok = run_ok & (pl.col("exercised") != "no")
    return verdicts.group_by("case_id", "episode_id").agg(
        ok=run_ok.all(),
        permission=(~pl.col("passed") & pl.col("assertion_type").is_in(PERMISSION_TYPES)).any(),
        failed=(~pl.col("passed")).sum(),
    )


def _case_verdict(case: Case, runs: int, counts: dict[str, Any] | None, families: tuple[str, ...]) -> CaseVerdict:
    if not runs:
        return CaseVerdict(case.id, case.category, 0, 0, None, case.min_pass_rate,
                           case.allow_no_runs, False)
    counts = counts or {"failing": 0, "permission": False}
    runs_passed = runs - int(counts["failing"])
    # a relative tolerance, so that 99 of 100 runs meet 0.99 despite floating point
    needed = case.min_pass_rate * runs
    enough = runs_passed >= needed - 1e-9 * max(1.0, needed)
    return CaseVerdict(case.id, case.category, runs, runs_passed, runs_passed / runs,
                       case.min_pass_rate, enough and not counts["permission"],
                       bool(counts["permission"]), families)


__all__ = ["EXAMPLES", "PERMISSION_TYPES", "RESULT_SCHEMA", "SEVERITY", "STEP_IDX",
           "CaseVerdict", "CheckResult", "Example", "FailedAssertion", "Summary", "build_result", "compact", "expand",
           "failed_assertions", "not_plain_pass", "runs_of_cases", "summarize"]
