"""`tracelab view`: a saved check as one self-contained HTML file (docs/cli.md §2, `tracelab view`).

`build_report` reads the saved check into a `Report` (a handful of set-based queries whatever
the corpus size): its counts from the rows `tracelab check` saved for it (`saved.VIEW_TABLES`),
its runs written as the report's JSON in DuckDB (`tracelab.view.runs`); `render_html` writes it
out. Neither Polars nor the suite compiler is imported, but for a check saved without those rows:
they are then computed as check computes them (`saved.view_rows`) from its check_results. The
file holds at most `max_runs` failing runs per case, says how many it left out, and never holds a
leaked string's fragments: a field that holds one is replaced by a notice naming the string
(`tracelab.view.show`).

Owns `show` (one run, its failures, leaked text withheld) and the HTML report. May import:
`tracelab.results`, `tracelab.engine`, `tracelab.suite`, `tracelab.store` and the foundation modules.
"""
from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tracelab.sqlfiles import load_sql

if TYPE_CHECKING:
    import duckdb

    from tracelab.store import Store
    from tracelab.view.runs import RunsJson

MAX_RUNS = 50
"""Failing runs per case the report holds by default (`--max-runs`)."""
REASONS_SHOWN = 5
"""Not-exercised reasons per assertion, most frequent first (at most `saved.REASONS_SAVED`)."""
SAMPLE_RUNS = 10
"""Run ids listed with each not-exercised reason (at most `saved.SAMPLE_RUNS`)."""


WHO_FIELDS = ("model", "agent", "case_id")
"""What the failing-run list shows of each run (sql/view/report/runs_who.sql)."""

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
class RunRow:
    """A failing run as the report lists it: who it is, and the first result of the case it failed."""

    episode_id: str
    model: str | None = None
    agent: str | None = None
    case_id: str | None = None
    """The run's own case or task id (the source's)."""
    assertion_id: str | None = None
    """Its first failed assertion in this case: at the earliest step, else about the whole run."""
    step_idx: int | None = None
    reason: str | None = None


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
    listed: tuple[RunRow, ...] = ()
    """`failing_runs` with who each is and what it failed first (the same order)."""

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
    """The store's file (or folder) name: a report is meant to be passed on, its path is the writer's own."""
    max_runs: int
    cases: tuple[CaseRow, ...]
    runs: RunsJson
    """The failing runs the file holds, with their steps, as the JSON the report's script reads."""
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
    from tracelab.results.saved import FAILING_RUNS_SAVED, failed_cases, has_view_rows, resolve_run
    from tracelab.store import Store, open_store
    from tracelab.view.runs import read_runs_json
    from tracelab.view.show import check_leaked_strings, fields_withheld, withheld_notice

    if not isinstance(store, Store):
        with open_store(store, read_only=True, create=False) as opened:
            return build_report(opened, run_id, max_runs=max_runs)
    con = store.con
    run_id = resolve_run(con, run_id)[0]
    params = {"run": run_id}
    head = _rows(con, "check_run", params)[0]
    failed = failed_cases(con, run_id)
    # what the check saved for the report, or the same computed from check_results: for a check
    # saved before it did (or by Spark), or more failing runs per case than it saved
    saved = max_runs <= FAILING_RUNS_SAVED and has_view_rows(con, run_id)
    with nullcontext() if saved else _saved_rows(con, run_id, max_runs):
        assertions = _rows(con, "assertions_saved", params)
        reasons = _rows(con, "reasons_saved", {**params, "top": REASONS_SHOWN, "sample": SAMPLE_RUNS})
        counts = {r["case_id"]: r for r in _rows(con, "cases_saved", params)}
        shown = _rows(con, "failing_runs_saved", {**params, "max_runs": max_runs})
        runs_summary = _rows(con, "summary_saved", params)[0]
    episode_ids = list(dict.fromkeys(r["episode_id"] for r in shown))
    leaked = check_leaked_strings(con, run_id)
    runs, failures = read_runs_json(con, run_id, episode_ids, leaked)
    who = {r["episode_id"]: r for r in _rows(con, "runs_who", {"runs": episode_ids})}
    for row in who.values():  # withheld by the rule every stored field follows (`fields_withheld`)
        for name, held in fields_withheld({**row, "_marked": True}, WHO_FIELDS, {}, leaked).items():
            row[name] = withheld_notice(held, name)
    case_ids = list(head["cases"] or []) or list(dict.fromkeys(r["case_id"] for r in assertions))
    by_case: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for name, rows in (("assertions", assertions), ("shown", shown), ("reasons", reasons),
                       ("failures", failures)):
        for row in rows:
            by_case.setdefault(row["case_id"], {}).setdefault(name, []).append(row)
    cases = [_case(case_id, counts.get(case_id), failed, by_case.get(case_id, {}), who) for case_id in case_ids]
    cases.sort(key=lambda c: (c.passed, not c.permission))  # failing first, permission failures first
    return Report(run_id=run_id, suite=head["suite"], started_at=head["started_at"],
                  elapsed_ms=head["elapsed_ms"], store=Path(store.path).name, max_runs=max_runs,
                  cases=tuple(cases), runs=runs, summary=_summary(runs_summary, assertions, cases),
                  verdicts_saved=failed is not None)


@contextmanager
def _saved_rows(con: duckdb.DuckDBPyConnection, run_id: str, max_runs: int) -> Iterator[None]:
    """Saved check `run_id`'s rows of `saved.VIEW_TABLES` and its check_runs row, computed as
    `tracelab check` saves them (`saved.view_rows`, with `max_runs` failing runs per case) from its
    check_results, for the block: so that the report reads them with the same queries
    (sql/view/report/*_saved.sql) as those of a check that saved them.

    Each is registered under its table's name, with the check's run_id: DuckDB looks a name up
    among the connection's temporary views before the store's tables and views, so the store's
    own (possibly without this check's rows, or with fewer failing runs) are not read. They are
    unregistered when the block ends; nothing is written to the store.
    """
    import polars as pl

    from tracelab.frames import ArrowStream
    from tracelab.results.saved import read_result, view_rows

    result = read_result(con, run_id)
    frames = {table: frame.with_columns(run_id=pl.lit(run_id))
              for table, frame in view_rows(result, failing_runs=max_runs).items()}
    frames["check_runs"] = pl.DataFrame({"run_id": [run_id], "runs": [result.runs],
                                         "runs_failed": [result.runs_failed]})
    try:
        for table, frame in frames.items():
            con.register(table, ArrowStream(frame))
        yield
    finally:
        for table in frames:
            con.unregister(table)


def write_report(report: Report, output: str | os.PathLike[str]) -> int:
    """Write the report's HTML to `output` (whole, or not at all); its size in bytes.

    Raises:
        UsageError: the file cannot be written (a missing folder, no permission, a full disk).
    """
    from tracelab.outputs import write_file
    from tracelab.view.html import render_html

    data = render_html(report).encode("utf-8")
    write_file(output, data)  # exclusively created temporary; a symlink followed, a device written through
    return len(data)


def _case(case_id: str, counts: dict[str, Any] | None, failed: list[str] | None,
          rows: dict[str, list[dict[str, Any]]], who: dict[str, dict[str, Any]]) -> CaseRow:
    """A case from its rows of each query (`assertions`, `shown`, `reasons`, `failures`), and
    who each run is (sql/view/report/runs_who.sql)."""
    failing: dict[str, list[str]] = {}
    order = {a["assertion_id"]: a["pos"] for a in rows.get("assertions", ())}
    first: dict[str, dict[str, Any]] = {}
    for r in rows.get("failures", ()):
        failing.setdefault(r["assertion_id"], []).append(r["episode_id"])
        if _sooner(r, first.get(r["episode_id"]), order):
            first[r["episode_id"]] = r
    why: dict[str, list[Reason]] = {}
    for r in rows.get("reasons", ()):  # most frequent first
        why.setdefault(r["assertion_id"], []).append(Reason(r["reason"], r["runs"], tuple(r["sample"])))
    assertions = tuple(
        AssertionRow(a["assertion_id"], a["assertion_type"], a["runs"], a["passed"], a["yes"], a["no"], a["unknown"],
                     failing_runs=tuple(failing.get(a["assertion_id"], ())),
                     reasons=tuple(why.get(a["assertion_id"], ())))
        for a in rows.get("assertions", ()))
    shown = rows.get("shown", [])
    runs = counts["runs"] if counts else 0
    runs_passed = counts["runs_passed"] if counts else 0
    permission = bool(counts and counts["permission"])
    passed = case_id not in failed if failed is not None else (runs > 0 and runs_passed == runs)
    listed = []
    for r in shown:
        run, found = who.get(r["episode_id"], {}), first.get(r["episode_id"], {})
        listed.append(RunRow(r["episode_id"], run.get("model"), run.get("agent"), run.get("case_id"),
                             found.get("assertion_id"), found.get("step_idx"), found.get("reason")))
    return CaseRow(case_id, runs, runs_passed, int(counts["failed"]) if counts else 0, passed, permission,
                   assertions, tuple(r["episode_id"] for r in shown), int(shown[0]["total"]) if shown else 0,
                   tuple(listed))


def _sooner(row: dict[str, Any], than: dict[str, Any] | None, order: dict[str, int]) -> bool:
    """Whether failed result `row` comes before `than` in its run: at an earlier step (a result about
    the whole run last), then earlier in the suite."""
    if than is None:
        return True
    def key(r: dict[str, Any]) -> tuple[bool, int, int]:
        return (r["step_idx"] is None, r["step_idx"] or 0, order.get(r["assertion_id"], 1 << 30))
    return key(row) < key(than)


def _summary(runs: dict[str, Any], assertions: list[dict[str, Any]], cases: list[CaseRow]) -> dict[str, int]:
    """The report's summary: cases from `cases`, runs from sql/view/report/summary_saved.sql, results summed
    over every assertion's row."""
    total = {name: sum(int(a[name]) for a in assertions) for name in ("runs", "failed", "yes", "no", "unknown")}
    return {"cases": len(cases), "cases_passed": sum(c.passed for c in cases), "runs": int(runs["runs"]),
            "runs_passed": int(runs["runs_passed"] or 0), "results": total["runs"], "failed": total["failed"],
            "yes": total["yes"], "no": total["no"], "unknown": total["unknown"]}


def _rows(con: duckdb.DuckDBPyConnection, name: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows of sql/view/report/<name>.sql, as dicts (a few hundred at most: no frame needed)."""
    cursor = con.execute(load_sql(f"view/report/{name}"), params or None)
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


__all__ = ["MAX_RUNS", "AssertionRow", "CaseRow", "Reason", "Report", "RunRow", "build_report", "write_report"]
