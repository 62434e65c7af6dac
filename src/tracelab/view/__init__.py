"""`tracelab view`: a saved check as one self-contained HTML file (cli-and-results "`tracelab view`").

`build_report` reads the saved check into a `Report` (a handful of set-based queries whatever
the corpus size); `render_html` writes it out. The file holds at most `max_runs` failing runs
per case, says how many it left out, and never holds a leaked string's fragments: a field
that holds one is replaced by a notice naming the string (`tracelab.show`).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from tracelab.errors import UsageError
from tracelab.sqlfiles import load_sql

if TYPE_CHECKING:
    import duckdb

    from tracelab.show import RunTable
    from tracelab.store import Store

MAX_RUNS = 50
"""Failing runs per case the report holds by default (`--max-runs`)."""
REASONS_SHOWN = 5
"""Not-exercised reasons per assertion, most frequent first."""
SAMPLE_RUNS = 10
"""Run ids listed with each not-exercised reason."""
PERMISSION_TYPES = ("must_not_leak", "must_not_write", "undeclared_writes")


@dataclass(frozen=True)
class Reason:
    """A reason results were left `exercised = no`: how many runs, and the first few of them."""

    reason: str | None
    runs: int
    sample: tuple[str, ...]


@dataclass(frozen=True)
class AssertionRow:
    """One assertion of a case: counts, and its failing runs among those the report holds."""

    assertion_id: str
    assertion_type: str
    runs: int
    passed: int
    yes: int
    no: int
    unknown: int
    failing_runs: tuple[str, ...] = ()
    reasons: tuple[Reason, ...] = ()

    @property
    def failed(self) -> int:
        return self.runs - self.passed

    @property
    def exercised_share(self) -> float | None:
        """Share of runs with `exercised = yes` (None without runs)."""
        return self.yes / self.runs if self.runs else None


@dataclass(frozen=True)
class CaseRow:
    """One case of the check: verdict, counts, assertions, and the failing runs the file holds."""

    case_id: str
    runs: int
    runs_passed: int
    failed_results: int
    passed: bool
    permission: bool
    assertions: tuple[AssertionRow, ...]
    failing_runs: tuple[str, ...]
    failing_total: int

    @property
    def left_out(self) -> int:
        """Failing runs of this case the file does not hold (over `max_runs`)."""
        return self.failing_total - len(self.failing_runs)


@dataclass(frozen=True)
class Report:
    """Everything `tracelab view` writes."""

    run_id: str
    suite: str | None
    started_at: datetime | None
    elapsed_ms: int | None
    store: str
    max_runs: int
    cases: tuple[CaseRow, ...]
    runs: RunTable
    """The failing runs the file holds, with their steps."""
    summary: dict[str, int] = field(default_factory=dict)
    verdicts_saved: bool = True
    """False for a check saved before case verdicts were: a case then counts as failed when a run failed."""


def build_report(store: Store | str | os.PathLike[str], run_id: str | None = None, *,
                 max_runs: int = MAX_RUNS) -> Report:
    """Read saved check `run_id` (the latest when None) into a `Report`.

    Raises:
        UsageError: no saved check, or none with that id.
        StoreError: the store cannot be opened.
    """
    from tracelab.saved import failed_cases, resolve_run
    from tracelab.show import check_leaked_strings, read_runs, saved_failures
    from tracelab.store import Store, open_store

    if not isinstance(store, Store):
        with open_store(store, read_only=True, create=False) as opened:
            return build_report(opened, run_id, max_runs=max_runs)
    con = store.con
    run_id = resolve_run(con, run_id)[0]
    params = {"run": run_id}
    head = _rows(con, "check_run", params)[0]
    counts = {r["case_id"]: r for r in _rows(con, "cases", params)}
    failed = failed_cases(con, run_id)
    assertions = _frame(con, "assertions", params)
    shown = _frame(con, "failing_runs", {**params, "max_runs": max_runs})
    reasons = _frame(con, "reasons", {**params, "top": REASONS_SHOWN, "sample": SAMPLE_RUNS})
    episode_ids = shown["episode_id"].unique(maintain_order=True).to_list()
    failures = saved_failures(con, run_id, episode_ids)
    runs = read_runs(con, episode_ids, failures=failures, needles=check_leaked_strings(con, run_id),
                     check_run_id=run_id, checked=episode_ids)
    case_ids = list(head["cases"] or []) or list(dict.fromkeys(assertions["case_id"].to_list()))
    by_case = {name: _parts(frame, "case_id") for name, frame in
               (("assertions", assertions), ("shown", shown), ("reasons", reasons), ("failures", failures))}
    cases = [_case(case_id, counts.get(case_id), failed,
                   *(by_case[name].get(case_id, empty[:0]) for name, empty in
                     (("assertions", assertions), ("shown", shown), ("reasons", reasons), ("failures", failures))))
             for case_id in case_ids]
    cases.sort(key=lambda c: (c.passed, not c.permission))  # failing first, permission failures first
    return Report(run_id=run_id, suite=head["suite"], started_at=head["started_at"],
                  elapsed_ms=head["elapsed_ms"], store=str(store.path), max_runs=max_runs,
                  cases=tuple(cases), runs=runs, summary=_summary(con, run_id, cases),
                  verdicts_saved=failed is not None)


def write_report(report: Report, output: str | os.PathLike[str]) -> int:
    """Write the report's HTML to `output` (whole, or not at all); its size in bytes.

    Raises:
        UsageError: the file cannot be written (a missing folder, no permission, a full disk).
    """
    from tracelab.view.html import render_html

    data = render_html(report).encode("utf-8")
    target = Path(output)
    partial = target.with_name(target.name + ".partial")
    try:
        partial.write_bytes(data)
        partial.replace(target)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise UsageError(f"{target}: cannot write the report: {exc.strerror or exc}") from None
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return len(data)


def _case(case_id: str, counts: dict[str, Any] | None, failed: list[str] | None, assertions: pl.DataFrame,
          shown: pl.DataFrame, reasons: pl.DataFrame, failures: pl.DataFrame) -> CaseRow:
    mine = shown
    failing = {key: list(frame["episode_id"]) for key, frame in _parts(failures, "assertion_id").items()}
    why: dict[str, list[Reason]] = {}
    for r in reasons.sort("runs", descending=True).iter_rows(named=True):
        why.setdefault(r["assertion_id"], []).append(Reason(r["reason"], r["runs"], tuple(r["sample"])))
    rows = []
    for a in assertions.iter_rows(named=True):
        rows.append(AssertionRow(
            a["assertion_id"], a["assertion_type"], a["runs"], a["passed"], a["yes"], a["no"], a["unknown"],
            failing_runs=tuple(failing.get(a["assertion_id"], ())), reasons=tuple(why.get(a["assertion_id"], ()))))
    runs = counts["runs"] if counts else 0
    runs_passed = counts["runs_passed"] if counts else 0
    permission = bool(counts and counts["permission"])
    passed = case_id not in failed if failed is not None else (runs > 0 and runs_passed == runs)
    return CaseRow(case_id, runs, runs_passed, int(counts["failed"]) if counts else 0, passed, permission,
                   tuple(rows), tuple(mine["episode_id"]), int(mine["total"][0]) if mine.height else 0)


def _parts(frame: pl.DataFrame, column: str) -> dict[str, pl.DataFrame]:
    """`frame` split by the values of `column` (one pass, not a filter per value)."""
    return {key[0]: part for key, part in frame.partition_by(column, as_dict=True, maintain_order=True).items()}


def _summary(con: duckdb.DuckDBPyConnection, run_id: str, cases: list[CaseRow]) -> dict[str, int]:
    row = con.execute(load_sql("view/summary"), {"run": run_id}).fetchall()[0]
    runs, runs_passed, results, failed, yes, no, unknown = (int(v or 0) for v in row)
    return {"cases": len(cases), "cases_passed": sum(c.passed for c in cases), "runs": runs,
            "runs_passed": runs_passed, "results": results, "failed": failed, "yes": yes, "no": no,
            "unknown": unknown}


def _frame(con: duckdb.DuckDBPyConnection, name: str, params: dict[str, Any]) -> pl.DataFrame:
    return pl.DataFrame(con.sql(load_sql(f"view/{name}"), params=params))


def _rows(con: duckdb.DuckDBPyConnection, name: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    return _frame(con, name, params).to_dicts()


__all__ = ["MAX_RUNS", "AssertionRow", "CaseRow", "Reason", "Report", "build_report", "write_report"]
