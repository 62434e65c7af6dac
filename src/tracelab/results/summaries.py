"""Verdict summaries of disjoint sets of runs, added up: `check --engine spark`, `check --since`.

Each check task of `check --engine spark` summarises the verdict rows of its runs into small
partial frames (`partials`); the driver merges them (`merge`) into what a check reports and
saves: the case verdicts and summary counts, the failing assertions with their first examples
(`EXAMPLES` each), and the rows `tracelab view` reads (`results.saved.VIEW_TABLES`). Every partial
is bounded by the suite (its cases and assertions, `FAILING_RUNS_SAVED` runs per case, `EXAMPLES`
per assertion, `SAMPLE_RUNS` per not-exercised reason), never by the runs, except the
not-exercised reasons, one row per distinct reason text. A run's rows are all in one task (the
tasks split the runs by `ep_bucket`), so what is per run (a case's run passed, failed a
permission result; a `must_not_write` failure that is an `undeclared_writes` one) is decided in
the task; the driver only adds, takes minima and keeps the first few.

A DuckDB check saves the partials of its whole result (`combine`d, table check_summaries); a
`check --since` that keeps every run of the earlier check it continues (none ingested again)
merges that check's with the new runs' instead of reading its rows back (`results.check`).

The order is the DuckDB engine's: its verdict rows come by result unit (the suite's order) and
run id, with `check --since` the carried rows first and then the fresh ones (`part`: 0 and 1 in
a Spark check; up a chain of `--since` runs, each check's own rows one part after those it keeps).
Every partial keeps the (part, run) of the rows it stands for, so the driver orders as the whole
frame would (`engine.verdicts.failed_assertions`, `results.saved.view_rows`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tracelab.engine.severity import OTHER_SEVERITY, PERMISSION_TYPES, SEVERITY
from tracelab.engine.verdicts import EXAMPLES, CaseVerdict, CheckResult, Example, FailedAssertion, Summary
from tracelab.results import saved

if TYPE_CHECKING:
    from datetime import datetime

    import duckdb
    import polars as pl

    from tracelab.suite.model import Case

KINDS = ("cases", "runs", "assertions", "same_write", "examples", "failing_runs", "reasons", "families")
"""The partial frames each task returns."""


def partials(notable: pl.DataFrame, selection: pl.DataFrame, units: pl.DataFrame, strict: bool,
             per_run: pl.DataFrame | None = None, totals: tuple[int, int, int] | None = None
             ) -> dict[str, pl.DataFrame]:
    """The partial summaries of some runs' verdict rows, from their compact form (`CheckResult`'s):
    `notable`, the rows that are not plain passes with `part` (Int64), in verdict order (part, result
    unit, run); `selection`, each (case_id, episode_id) the cases selected, once; `units`,
    (case_id, assertion_id, assertion_type, unit), each checked case's results with their rank in the
    suite. What the caller has counted already is taken as given: `per_run`, `runs_of_cases` of the
    failing rows (`CheckResult.per_run`: a (case, run) pair without one passed every result of the
    case); `totals`, (runs, runs_passed, runs_failed) over every case (`Summary`,
    `CheckResult.runs_failed`). One Polars query plan (`collect_all`), as `engine.verdicts.summarize`."""
    import polars as pl

    from tracelab.engine.verdicts import _same_writes, runs_of_cases

    counts = pl.Int64
    rows = notable.lazy()
    if per_run is None:
        failing = ~pl.col("passed") | ((pl.col("exercised") == "no") if strict else pl.lit(False))
        per_run = runs_of_cases(notable.filter(failing), strict)
    by_run = per_run.lazy()
    runs = selection.lazy().group_by("case_id").agg(runs=pl.len().cast(counts))
    per_case = by_run.group_by("case_id").agg(
        not_ok=(~pl.col("ok")).sum().cast(counts), runs_failed=(pl.col("failed") > 0).sum().cast(counts),
        failed=pl.col("failed").sum().cast(counts), permission=pl.col("permission").any())
    cases = runs.join(per_case, on="case_id", how="left").select(
        "case_id", "runs", ok=pl.col("runs") - pl.col("not_ok").fill_null(0),
        runs_failed=pl.col("runs_failed").fill_null(0), failed=pl.col("failed").fill_null(0),
        permission=pl.col("permission").fill_null(False))
    total = (pl.LazyFrame({"runs": [totals[0]], "runs_passed": [totals[1]], "runs_failed": [totals[2]]},
                          schema={k: counts for k in ("runs", "runs_passed", "runs_failed")})
             if totals is not None else
             pl.concat([selection.lazy().select(runs=pl.col("episode_id").n_unique().cast(counts)),
                        by_run.select(bad=pl.col("episode_id").filter(~pl.col("ok")).n_unique().cast(counts),
                                      runs_failed=pl.col("episode_id").filter(pl.col("failed") > 0)
                                      .n_unique().cast(counts))], how="horizontal")
             .select("runs", runs_passed=pl.col("runs") - pl.col("bad"), runs_failed="runs_failed"))
    families = (rows.filter(~pl.col("passed") & pl.col("assertion_type").is_in(PERMISSION_TYPES))
                .select("case_id", "assertion_type").unique())
    exercised = pl.col("exercised")
    failed = rows.filter(~pl.col("passed"))
    same = _same_writes(failed.with_row_index("order"))  # `order`: the rows' order, as failed_assertions has it
    located = failed.join(same, on=["case_id", "assertion_id", "episode_id"], how="left", maintain_order="left")
    listed = ~((pl.col("assertion_type") == "undeclared_writes") & pl.col("also").is_not_null())
    found = rows.group_by("case_id", "assertion_id").agg(
        failed=(~pl.col("passed")).sum().cast(counts), no=(exercised == "no").sum().cast(counts),
        unknown=(exercised == "unknown").sum().cast(counts))
    firsts = located.group_by("case_id", "assertion_id").agg(  # first(): in row order within each group
        listed=listed.sum().cast(counts), first_part=pl.col("part").first(),
        first_run=pl.col("episode_id").first())
    keys = ["case_id", "assertion_id"]
    assertions = (units.lazy().join(runs, on="case_id", how="inner", maintain_order="left")
                  .select("case_id", "assertion_id", "assertion_type", pl.col("unit").cast(counts), rows="runs")
                  .join(found, on=keys, how="left", maintain_order="left")
                  .with_columns(pl.col("failed", "no", "unknown").fill_null(0))
                  .join(firsts, on=keys, how="left", maintain_order="left"))
    same_write = (located.filter(pl.col("also").is_not_null()).group_by("case_id", "assertion_id", "also")
                  .agg(runs=pl.len().cast(counts)))
    examples = (located.filter(listed).group_by("case_id", "assertion_id").head(EXAMPLES)  # combine sorts them
                .select("case_id", "assertion_id", "part", "episode_id", "step_idx", "reason", "also"))
    failing_runs = (by_run.filter(pl.col("failed") > 0).group_by("case_id", "permission").agg(
        pl.col("episode_id").bottom_k(saved.FAILING_RUNS_SAVED)).explode("episode_id")
        .select("case_id", "episode_id", "permission"))
    reasons = (rows.filter(exercised == "no").group_by("case_id", "assertion_id", "reason")
               .agg(runs=pl.len().cast(counts), sample=pl.col("episode_id").bottom_k(saved.SAMPLE_RUNS).sort()))
    frames = pl.collect_all([cases, total, assertions, same_write, examples, failing_runs, reasons, families])
    return dict(zip(KINDS, frames, strict=True))


def combine(found: dict[str, list[pl.DataFrame]]) -> dict[str, pl.DataFrame]:
    """The partial summaries of several disjoint sets of runs (per kind, one frame per set) as one
    set's: counts added, the first examples, failing runs and reason samples kept. Combining again
    changes nothing, so a check saves its own (`check --since` combines them with the new runs')."""
    import polars as pl

    parts = {kind: pl.concat(frames, how="vertical_relaxed") for kind, frames in found.items() if frames}
    combined: dict[str, pl.DataFrame] = {}
    if "cases" in parts:
        combined["cases"] = parts["cases"].group_by("case_id", maintain_order=True).agg(
            pl.col("runs", "ok", "runs_failed", "failed").sum(), pl.col("permission").any())
    if "runs" in parts:
        combined["runs"] = parts["runs"].sum()
    if "assertions" in parts:
        combined["assertions"] = (
            parts["assertions"].sort("first_part", "first_run", nulls_last=True).group_by("case_id", "assertion_id")
            .agg(pl.col("assertion_type", "unit").first(), pl.col("rows", "failed", "no", "unknown").sum(),
                 pl.col("listed").fill_null(0).sum(), pl.col("first_part", "first_run").drop_nulls().first())
            .sort("unit"))
    if "same_write" in parts:
        combined["same_write"] = (parts["same_write"].group_by("case_id", "assertion_id", "also")
                                  .agg(pl.col("runs").sum()).sort("case_id", "assertion_id", "also"))
    if "examples" in parts:
        combined["examples"] = (parts["examples"].sort("part", "episode_id")
                                .group_by("case_id", "assertion_id", maintain_order=True).head(EXAMPLES))
    if "failing_runs" in parts:
        combined["failing_runs"] = (parts["failing_runs"].sort("episode_id")
                                    .group_by("case_id", "permission", maintain_order=True)
                                    .head(saved.FAILING_RUNS_SAVED).select("case_id", "episode_id", "permission"))
    if "reasons" in parts:
        combined["reasons"] = parts["reasons"].group_by("case_id", "assertion_id", "reason").agg(
            runs=pl.col("runs").sum(), sample=pl.col("sample").explode().sort().head(saved.SAMPLE_RUNS))
    if "families" in parts:
        combined["families"] = parts["families"].unique(maintain_order=True)
    return combined


@dataclass(frozen=True)
class AggregatedResult(CheckResult):
    """A `CheckResult` merged from partial summaries (a Spark check's tasks'; with `check --since`,
    the earlier check's and the new runs'): `verdicts` holds only the rows the chosen output lists
    (`rows`: "none", "reported" for the failures and not-exercised rows, or "all"), in the DuckDB
    engine's order; `per_run` is empty (the view rows come with it)."""

    failures: tuple[FailedAssertion, ...] = ()
    """`failed_assertions()` with `EXAMPLES` examples each."""
    never_exercised_count: int = 0
    """Assertions whose every result was `exercised = no` (what the text report's note counts)."""
    rows: str = "none"
    view_rows: dict[str, pl.DataFrame] | None = None
    """The rows `tracelab view` reads (`results.saved.view_rows`)."""
    summaries: dict[str, pl.DataFrame] | None = None
    """The partial summaries of the whole check, combined (`combine`): what it saves for a later
    `check --since` to continue from."""
    fresh: tuple[pl.DataFrame, pl.DataFrame] | None = None
    """`check --since`: the notable rows and the selection of the runs it evaluated (what it saves
    of its own; the earlier check's it keeps by reference)."""

    def failed_assertions(self, examples: int | None = EXAMPLES) -> list[FailedAssertion]:
        if examples == EXAMPLES:
            return list(self.failures)
        if self.rows == "none":
            raise ValueError("this check kept no verdict row: ask for rows='reported' to list every failure")
        return super().failed_assertions(examples)


def merge(found: dict[str, list[pl.DataFrame]], suite: str, chosen: tuple[Case, ...], strict: bool,
          verdicts: pl.DataFrame, rows: str, fresh: tuple[pl.DataFrame, pl.DataFrame] | None = None
          ) -> AggregatedResult:
    """The check's result from the partial summaries of disjoint sets of runs (`found`: per kind,
    one frame per set: a Spark task's, or an earlier check's and the new runs' with `check
    --since`); `verdicts`: the rows collected for the output (`rows`); `fresh`: the notable rows
    and selection of the runs this check evaluated itself, when it saves them (`check --since`)."""
    import polars as pl

    from tracelab.engine.verdicts import _case_verdict, not_plain_pass

    parts = combine(found)
    per_case = {r["case_id"]: r for r in parts["cases"].iter_rows(named=True)} if "cases" in parts else {}
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
    totals = parts.get("runs")
    assertions = parts.get("assertions", pl.DataFrame())
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
        runs_failed=_total(totals, "runs_failed"), summaries=parts,
        failures=_failures(parts, assertions, [c.id for c in chosen]), never_exercised_count=never, rows=rows,
        view_rows=_view_rows(parts, verdict_list), fresh=fresh)
    result.__dict__["verdicts"] = verdicts  # only the rows listed (`rows`): `verdicts` is a cached property
    return result


def _total(totals: pl.DataFrame | None, column: str) -> int:
    return 0 if totals is None or totals.height == 0 else int(totals[column][0] or 0)


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
        for r in parts["examples"].iter_rows(named=True):
            examples.setdefault((r["case_id"], r["assertion_id"]), []).append(
                Example(r["episode_id"], r["step_idx"], r["reason"], (r["also"],) if r["also"] else ()))
    same: dict[tuple[str, str], dict[str, int]] = {}
    if "same_write" in parts:
        for r in parts["same_write"].iter_rows(named=True):
            same.setdefault((r["case_id"], r["assertion_id"]), {})[r["also"]] = r["runs"]
    return tuple(FailedAssertion(g["case_id"], g["assertion_id"], g["assertion_type"], g["severity"], g["failed"],
                                 tuple(same.get((g["case_id"], g["assertion_id"]), {}).items()),
                                 tuple(examples.get((g["case_id"], g["assertion_id"]), ())), g["listed"])
                 for g in groups.iter_rows(named=True))


def _view_rows(parts: dict[str, pl.DataFrame], cases: tuple[CaseVerdict, ...]) -> dict[str, pl.DataFrame]:
    """`results.saved.view_rows` of the whole check, from the combined partials (`combine`) and its
    case verdicts (those of `cases` with runs have a row in parts["cases"])."""
    import polars as pl

    per_case = {r["case_id"]: r for r in parts["cases"].iter_rows(named=True)} if "cases" in parts else {}
    assertions = parts.get("assertions", pl.DataFrame())
    table = pl.DataFrame(
        [(c.id, c.runs, c.runs - per_case[c.id]["runs_failed"], per_case[c.id]["failed"],
          bool(per_case[c.id]["permission"])) for c in cases if c.runs],
        schema={"case_id": pl.Utf8, "runs": pl.Int64, "runs_passed": pl.Int64, "failed": pl.Int64,
                "permission": pl.Boolean}, orient="row")
    failing = (parts["failing_runs"] if "failing_runs" in parts else
               pl.DataFrame(schema={"case_id": pl.Utf8, "episode_id": pl.Utf8, "permission": pl.Boolean}))
    if assertions.height:
        shown = assertions.with_columns(pos=(pl.col("rows").cum_sum() - pl.col("rows")).cast(pl.Int64)).select(
            "case_id", "assertion_id", "assertion_type", "pos", runs="rows",
            passed=pl.col("rows") - pl.col("failed"), yes=pl.col("rows") - pl.col("no") - pl.col("unknown"),
            no="no", unknown="unknown")
    else:
        shown = pl.DataFrame(schema={"case_id": pl.Utf8, "assertion_id": pl.Utf8, "assertion_type": pl.Utf8,
                                     **{c: pl.Int64 for c in ("pos", "runs", "passed", "yes", "no", "unknown")}})
    reasons = (parts["reasons"].sort("case_id", "assertion_id", "runs", "reason",
                                     descending=[False, False, True, False], nulls_last=True)
               .group_by("case_id", "assertion_id", maintain_order=True).head(saved.REASONS_SAVED)
               if "reasons" in parts else
               pl.DataFrame(schema={"case_id": pl.Utf8, "assertion_id": pl.Utf8, "reason": pl.Utf8,
                                    "runs": pl.Int64, "sample": pl.List(pl.Utf8)}))
    return {"check_failing_runs": failing, "check_cases": table, "check_assertions": shown, "check_reasons": reasons}


def view_rows_of(result: CheckResult, summaries: dict[str, pl.DataFrame]) -> dict[str, pl.DataFrame]:
    """The rows `tracelab view` reads (`results.saved.view_rows`) of a check, from its summaries
    (`summaries_of`): what they count already is not counted again."""
    return _view_rows(summaries, result.cases)


def summaries_of(result: CheckResult) -> dict[str, pl.DataFrame]:
    """The partial summaries of a DuckDB check's whole result, combined: its notable rows in their
    order, those an earlier check found (`CheckResult.carried`, `check --since`) as part 0 and its
    own as part 1. Only where the rows it kept are of one check (no chain of `--since` runs behind
    it: their parts are not in the rows) do they order as `check --since` merges them."""
    import polars as pl

    notable = result.notable.with_columns(part=(pl.int_range(pl.len()) >= result.carried[0]).cast(pl.Int64))
    units = result.units.with_row_index("unit")
    totals = (result.summary.runs, result.summary.runs_passed, result.runs_failed)
    return combine({kind: [frame] for kind, frame in
                    partials(notable, result.selection, units, result.strict, result.per_run, totals).items()})


def continued(fresh: CheckResult, kept: dict[str, pl.DataFrame], chosen: tuple[Case, ...]) -> AggregatedResult:
    """A `check --since` result without the earlier check's rows: its saved summaries (`kept`,
    `saved_summaries`) merged with those of the runs this check evaluated (`fresh`, an
    `evaluate` of them alone), which come after every part of the earlier check's."""
    import polars as pl

    parts = [part for kind, column in (("examples", "part"), ("assertions", "first_part"))
             for part in kept[kind][column].drop_nulls().cast(pl.Int64).to_list()]
    last = max(parts, default=-1)
    notable = fresh.notable.with_columns(part=pl.lit(last + 1, pl.Int64))
    mine = partials(notable, fresh.selection, fresh.units.with_row_index("unit"), fresh.strict, fresh.per_run,
                    (fresh.summary.runs, fresh.summary.runs_passed, fresh.runs_failed))
    return merge({kind: [kept[kind], mine[kind]] for kind in KINDS}, fresh.suite, chosen, fresh.strict,
                 fresh.notable.clear(), "none", fresh=(fresh.notable, fresh.selection))


def saved_summaries(con: duckdb.DuckDBPyConnection, run_id: str, chosen: tuple[Case, ...], strict: bool,
                    since: datetime) -> dict[str, pl.DataFrame] | None:
    """Saved check `run_id`'s partial summaries (check_summaries), when a `check --since` of the
    cases `chosen` (with `strict` or not) can continue from them: they were saved, that check
    checked the same cases, and no run it selected was ingested again after `since`. None otherwise,
    and where a frame cannot be read (a damaged store: its rows are read back instead)."""
    from tracelab.frames import from_ipc
    from tracelab.results.saved import _has_table
    from tracelab.sqlfiles import load_sql

    if not _has_table(con, "check_summaries"):
        return None  # a read-only store of an earlier tracelab
    found = con.execute(load_sql("results/summaries/kept"), {
        "run": run_id, "strict": strict, "cases": [case.id for case in chosen], "since": since}).fetchall()
    try:
        frames = {kind: from_ipc(frame) for kind, frame in found}
    except Exception:  # noqa: BLE001 -- a damaged frame: the rows, which hold the same, are read back instead
        return None
    return frames if set(frames) == set(KINDS) else None


def save_summaries(con: duckdb.DuckDBPyConnection, run_id: str, strict: bool,
                   summaries: dict[str, pl.DataFrame]) -> None:
    """Write a check's partial summaries (`summaries_of`, `AggregatedResult.summaries`) to check_summaries."""
    from tracelab.frames import to_ipc

    for kind in KINDS:
        con.execute("INSERT INTO check_summaries (run_id, kind, strict, frame) VALUES (?, ?, ?, ?)",
                    [run_id, kind, strict, to_ipc(summaries[kind])])


__all__ = ["KINDS", "AggregatedResult", "combine", "continued", "merge", "partials", "save_summaries",
           "saved_summaries", "summaries_of", "view_rows_of"]
