"""Verdict summaries aggregated where the verdicts are (`check --engine spark`).

Each check task summarises the verdict rows of its runs into small partial frames (`partials`);
the driver merges them (`merge`) into what a check reports and saves: the case verdicts and
summary counts, the failing assertions with their first examples (`EXAMPLES` each), and the rows
`tracelab view` reads (`results.saved.VIEW_TABLES`). Every partial is bounded by the suite (its
cases and assertions, `FAILING_RUNS_SAVED` runs per case, `EXAMPLES` per assertion, `SAMPLE_RUNS`
per not-exercised reason), never by the runs, except the not-exercised reasons, one row per
distinct reason text. A run's rows are all in one task (the tasks split the runs by `ep_bucket`),
so what is per run (a case's run passed, failed a permission result; a `must_not_write` failure
that is an `undeclared_writes` one) is decided in the task; the driver only adds, takes minima and
keeps the first few.

The order is the DuckDB engine's: its verdict rows come by result unit (the suite's order) and
run id, with `check --since` the carried rows first (`part` 0) and then the fresh ones (`part` 1).
Every partial keeps the (part, run) of the rows it stands for, so the driver orders as the whole
frame would (`engine.verdicts.failed_assertions`, `results.saved.view_rows`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tracelab.engine.severity import OTHER_SEVERITY, PERMISSION_TYPES, SEVERITY
from tracelab.engine.verdicts import EXAMPLES, CheckResult, Example, FailedAssertion, Summary
from tracelab.results.saved import FAILING_RUNS_SAVED, REASONS_SAVED, SAMPLE_RUNS

if TYPE_CHECKING:
    import polars as pl

    from tracelab.suite.model import Case

KINDS = ("cases", "runs", "assertions", "same_write", "examples", "failing_runs", "reasons", "families")
"""The partial frames each task returns."""


def partials(verdicts: pl.DataFrame, strict: bool) -> dict[str, pl.DataFrame]:
    """The partial summaries of some runs' verdict rows (`tasks.VERDICT_COLUMNS` plus `part` and
    `unit`, the unit's rank in the suite), sorted by (part, unit, episode_id)."""
    import polars as pl

    from tracelab.engine.verdicts import _same_writes, runs_of_cases

    per_run = runs_of_cases(verdicts, strict)
    cases = per_run.group_by("case_id").agg(
        runs=pl.len().cast(pl.Int64), ok=pl.col("ok").sum().cast(pl.Int64),
        runs_failed=(pl.col("failed") > 0).sum().cast(pl.Int64), failed=pl.col("failed").sum().cast(pl.Int64),
        permission=pl.col("permission").any())
    by_run = per_run.group_by("episode_id").agg(ok=pl.col("ok").all(), failed=(pl.col("failed") > 0).any())
    runs = pl.DataFrame({"runs": [by_run.height], "runs_passed": [int(by_run["ok"].sum())],
                         "runs_failed": [int(by_run["failed"].sum())]}, schema={k: pl.Int64 for k in (
                             "runs", "runs_passed", "runs_failed")})
    families = (verdicts.filter(~pl.col("passed") & pl.col("assertion_type").is_in(PERMISSION_TYPES))
                .select("case_id", "assertion_type").unique())
    exercised = pl.col("exercised")
    failed = verdicts.filter(~pl.col("passed"))
    same = _same_writes(failed.with_row_index("order"))  # `order`: the rows' order, as failed_assertions has it
    rows = failed.join(same, on=["case_id", "assertion_id", "episode_id"], how="left", maintain_order="left")
    listed = ~((pl.col("assertion_type") == "undeclared_writes") & pl.col("also").is_not_null())
    counts = verdicts.group_by("case_id", "assertion_id", maintain_order=True).agg(
        assertion_type=pl.col("assertion_type").first(), unit=pl.col("unit").first(),
        rows=pl.len().cast(pl.Int64), failed=(~pl.col("passed")).sum().cast(pl.Int64),
        no=(exercised == "no").sum().cast(pl.Int64), unknown=(exercised == "unknown").sum().cast(pl.Int64))
    firsts = rows.group_by("case_id", "assertion_id", maintain_order=True).agg(
        listed=listed.sum().cast(pl.Int64), first_part=pl.col("part").first(),
        first_run=pl.col("episode_id").first())
    assertions = counts.join(firsts, on=["case_id", "assertion_id"], how="left", maintain_order="left")
    same_write = (rows.filter(pl.col("also").is_not_null()).group_by("case_id", "assertion_id", "also")
                  .agg(runs=pl.len().cast(pl.Int64)))
    examples = (rows.filter(listed).group_by("case_id", "assertion_id", maintain_order=True).head(EXAMPLES)
                .select("case_id", "assertion_id", "part", "episode_id", "step_idx", "reason", "also"))
    failing = per_run.filter(pl.col("failed") > 0)
    failing_runs = (failing.sort("episode_id").group_by("case_id", "permission", maintain_order=True)
                    .head(FAILING_RUNS_SAVED).select("case_id", "episode_id", "permission"))
    reasons = (verdicts.filter(exercised == "no").group_by("case_id", "assertion_id", "reason")
               .agg(runs=pl.len().cast(pl.Int64), sample=pl.col("episode_id").sort().head(SAMPLE_RUNS)))
    return {"cases": cases, "runs": runs, "assertions": assertions, "same_write": same_write,
            "examples": examples, "failing_runs": failing_runs, "reasons": reasons, "families": families}


@dataclass(frozen=True)
class AggregatedResult(CheckResult):
    """A `CheckResult` merged from the tasks' partial summaries: `verdicts` holds only the rows the
    chosen output lists (`rows`: "none", "reported" for the failures and not-exercised rows, or
    "all"), in the DuckDB engine's order; `per_run` is empty (the view rows come with it)."""

    failures: tuple[FailedAssertion, ...] = ()
    """`failed_assertions()` with `EXAMPLES` examples each."""
    never_exercised_count: int = 0
    """Assertions whose every result was `exercised = no` (what the text report's note counts)."""
    rows: str = "none"
    view_rows: dict[str, pl.DataFrame] | None = None
    """The rows `tracelab view` reads (`results.saved.view_rows`)."""

    def failed_assertions(self, examples: int | None = EXAMPLES) -> list[FailedAssertion]:
        if examples == EXAMPLES:
            return list(self.failures)
        if self.rows == "none":
            raise ValueError("this check kept no verdict row: ask for rows='reported' to list every failure")
        return super().failed_assertions(examples)


def merge(found: dict[str, list[pl.DataFrame]], suite: str, chosen: tuple[Case, ...], strict: bool,
          verdicts: pl.DataFrame, rows: str) -> AggregatedResult:
    """The check's result from every task's partials (`found`: per kind, one frame per task);
    `verdicts`: the rows collected for the output (`rows`)."""
    import polars as pl

    from tracelab.engine.verdicts import _case_verdict, not_plain_pass

    parts = {kind: pl.concat(frames, how="vertical_relaxed") for kind, frames in found.items() if frames}
    cases = (parts["cases"].group_by("case_id").agg(pl.col("runs", "ok", "runs_failed", "failed").sum(),
                                                    pl.col("permission").any())
             if "cases" in parts else pl.DataFrame())
    per_case = {r["case_id"]: r for r in cases.iter_rows(named=True)}
    kinds: dict[str, set[str]] = {}
    if "families" in parts:
        for case_id, kind in parts["families"].iter_rows():
            kinds.setdefault(case_id, set()).add(kind)
    verdict_list = tuple(
        _case_verdict(case, per_case[case.id]["runs"] if case.id in per_case else 0,
                      None if case.id not in per_case else
                      {"failing": per_case[case.id]["runs"] - per_case[case.id]["ok"],
                       "permission": per_case[case.id]["permission"]},
                      tuple(k for k in PERMISSION_TYPES if k in kinds.get(case.id, ())))
        for case in chosen)
    totals = parts["runs"].sum() if "runs" in parts else None
    assertions = _assertions(parts.get("assertions"))
    summary = Summary(
        cases=len(verdict_list), cases_passed=sum(c.passed for c in verdict_list),
        runs=_total(totals, "runs"), runs_passed=_total(totals, "runs_passed"),
        results=int(assertions["rows"].sum()) if assertions.height else 0,
        failed=int(assertions["failed"].sum()) if assertions.height else 0,
        not_exercised=int(assertions["no"].sum()) if assertions.height else 0,
        unknown=int(assertions["unknown"].sum()) if assertions.height else 0)
    never = assertions.filter(pl.col("no") == pl.col("rows")).height if assertions.height else 0
    empty = pl.DataFrame(schema={"case_id": pl.Utf8, "episode_id": pl.Utf8})
    units = pl.DataFrame(schema={"case_id": pl.Utf8, "assertion_id": pl.Utf8, "assertion_type": pl.Utf8})
    result = AggregatedResult(
        suite, verdicts.filter(not_plain_pass()), empty, units, verdict_list, summary, pl.DataFrame(), strict,
        failures=_failures(parts, assertions, [c.id for c in chosen]), never_exercised_count=never, rows=rows,
        view_rows=_view_rows(parts, assertions, verdict_list, per_case), runs_failed=_total(totals, "runs_failed"))
    result.__dict__["verdicts"] = verdicts  # only the rows listed (`rows`): `verdicts` is a cached property
    return result


def _total(totals: pl.DataFrame | None, column: str) -> int:
    return 0 if totals is None or totals.height == 0 else int(totals[column][0] or 0)


def _assertions(frame: pl.DataFrame | None) -> pl.DataFrame:
    """Per (case, assertion): its counts summed over the tasks, and its first failing row (part, run)."""
    import polars as pl

    if frame is None:
        return pl.DataFrame()
    return frame.sort("first_part", "first_run", nulls_last=True).group_by("case_id", "assertion_id").agg(
        pl.col("assertion_type", "unit").first(), pl.col("rows", "failed", "no", "unknown").sum(),
        pl.col("listed").fill_null(0).sum(), pl.col("first_part", "first_run").drop_nulls().first(),
    ).sort("unit")


def _failures(parts: dict[str, pl.DataFrame], assertions: pl.DataFrame, case_order: list[str]
              ) -> tuple[FailedAssertion, ...]:
    """`engine.verdicts.failed_assertions` with `EXAMPLES` examples, from the merged partials: cases
    in `case_order`, then by severity, most failing runs, and first failing row."""
    import polars as pl

    if not assertions.height:
        return ()
    ranks = {case: i for i, case in enumerate(case_order)}
    groups = assertions.filter(pl.col("failed") > 0).with_columns(
        case_rank=pl.col("case_id").replace_strict(ranks, default=len(ranks), return_dtype=pl.Int64),
        severity=pl.col("assertion_type").replace_strict(SEVERITY, default=OTHER_SEVERITY, return_dtype=pl.Int64),
    ).sort("case_rank", "severity", "failed", "first_part", "unit", "first_run",
           descending=[False, False, True, False, False, False])
    examples: dict[tuple[str, str], list[Example]] = {}
    if "examples" in parts:
        shown = (parts["examples"].sort("part", "episode_id")
                 .group_by("case_id", "assertion_id", maintain_order=True).head(EXAMPLES))
        for r in shown.iter_rows(named=True):
            examples.setdefault((r["case_id"], r["assertion_id"]), []).append(
                Example(r["episode_id"], r["step_idx"], r["reason"], (r["also"],) if r["also"] else ()))
    same: dict[tuple[str, str], dict[str, int]] = {}
    if "same_write" in parts:
        for r in (parts["same_write"].group_by("case_id", "assertion_id", "also").agg(pl.col("runs").sum())
                  .sort("also").iter_rows(named=True)):
            same.setdefault((r["case_id"], r["assertion_id"]), {})[r["also"]] = r["runs"]
    return tuple(FailedAssertion(g["case_id"], g["assertion_id"], g["assertion_type"], g["severity"], g["failed"],
                                 tuple(same.get((g["case_id"], g["assertion_id"]), {}).items()),
                                 tuple(examples.get((g["case_id"], g["assertion_id"]), ())), g["listed"])
                 for g in groups.iter_rows(named=True))


def _view_rows(parts: dict[str, pl.DataFrame], assertions: pl.DataFrame, cases: tuple[Any, ...],
               per_case: dict[str, dict[str, Any]]) -> dict[str, pl.DataFrame]:
    """`results.saved.view_rows` of the whole check, from the merged partials."""
    import polars as pl

    table = pl.DataFrame(
        [(c.id, c.runs, c.runs - per_case[c.id]["runs_failed"], per_case[c.id]["failed"],
          bool(per_case[c.id]["permission"])) for c in cases if c.runs],
        schema={"case_id": pl.Utf8, "runs": pl.Int64, "runs_passed": pl.Int64, "failed": pl.Int64,
                "permission": pl.Boolean}, orient="row")
    failing = (parts["failing_runs"].sort("episode_id").group_by("case_id", "permission", maintain_order=True)
               .head(FAILING_RUNS_SAVED).select("case_id", "episode_id", "permission")
               if "failing_runs" in parts else
               pl.DataFrame(schema={"case_id": pl.Utf8, "episode_id": pl.Utf8, "permission": pl.Boolean}))
    if assertions.height:
        shown = assertions.with_columns(pos=(pl.col("rows").cum_sum() - pl.col("rows")).cast(pl.Int64)).select(
            "case_id", "assertion_id", "assertion_type", "pos", runs="rows",
            passed=pl.col("rows") - pl.col("failed"), yes=pl.col("rows") - pl.col("no") - pl.col("unknown"),
            no="no", unknown="unknown")
    else:
        shown = pl.DataFrame(schema={"case_id": pl.Utf8, "assertion_id": pl.Utf8, "assertion_type": pl.Utf8,
                                     **{c: pl.Int64 for c in ("pos", "runs", "passed", "yes", "no", "unknown")}})
    reasons = (parts["reasons"].group_by("case_id", "assertion_id", "reason").agg(
        runs=pl.col("runs").sum(), sample=pl.col("sample").explode().sort().head(SAMPLE_RUNS))
        .sort("case_id", "assertion_id", "runs", "reason", descending=[False, False, True, False], nulls_last=True)
        .group_by("case_id", "assertion_id", maintain_order=True).head(REASONS_SAVED)
        if "reasons" in parts else
        pl.DataFrame(schema={"case_id": pl.Utf8, "assertion_id": pl.Utf8, "reason": pl.Utf8, "runs": pl.Int64,
                             "sample": pl.List(pl.Utf8)}))
    return {"check_failing_runs": failing, "check_cases": table, "check_assertions": shown, "check_reasons": reasons}


__all__ = ["KINDS", "AggregatedResult", "merge", "partials"]
