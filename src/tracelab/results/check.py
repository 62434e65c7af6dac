"""`tracelab.results.check`: load a suite, refuse what cannot fail, evaluate, save the results."""
from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from tracelab.errors import Interrupted, SuiteError, UsageError, is_interrupt

if TYPE_CHECKING:
    import duckdb
    import polars as pl

    from tracelab.engine.evaluate import Carried
    from tracelab.engine.verdicts import CheckResult
    from tracelab.store import Store
    from tracelab.suite.model import Case, Suite


CHECK_MEMORY_LIMIT = "2GB"
"""DuckDB's memory limit while a check evaluates and saves, unless TRACELAB_MEMORY_LIMIT is set.

At 1M runs the store's default (1 GB) makes the check spill its temp tables to disk; at 2 GB the
check of benchmarks/suite.yaml took 74 CPU s instead of 84 with a peak RSS of 2.9 GB (BENCHMARKS.md).
"""


@dataclass(frozen=True)
class CheckRun:
    """One check: the result, and where and when it ran.

    Attributes:
        result: verdict rows, case verdicts and summary counts.
        suite: the loaded suite.
        run_id: the id under which `check_runs` / `check_results` hold it (also when not saved).
        store: the store's path.
        elapsed_ms: wall time of loading and evaluating.
        saved: whether the rows were written to the store.
    """

    result: CheckResult
    suite: Suite
    run_id: str
    store: str
    elapsed_ms: int
    saved: bool

    @property
    def verdicts(self) -> pl.DataFrame:
        """One row per (case, assertion, run): passed, exercised, reason."""
        return self.result.verdicts

    @property
    def passed(self) -> bool:
        return self.result.passed


def refuse_findings(suite: Suite) -> None:
    """Raise `SuiteError` when the static sweep (docs/suites.md §6) finds anything."""
    from tracelab.suite import lint_suite

    findings = lint_suite(suite)
    if findings:
        first = findings[0]
        more = f" (and {len(findings) - 1} more: see `tracelab lint`)" if len(findings) > 1 else ""
        raise SuiteError(f"{suite.path}: case {first.case!r}, {first.assertion}: {first.kind}: "
                         f"{first.reason}{more}; pass --allow-ineffective to check anyway")


def check(store: Store | str | os.PathLike[str], suite_path: str | os.PathLike[str], *,
          cases: list[str] | None = None, categories: list[str] | None = None, strict: bool = False,
          allow_ineffective: bool = False, save: bool = True, since: str | None = None,
          rows: str = "all") -> CheckRun:
    """Check a suite against every stored run it selects.

    Args:
        store: an open `Store`, or the path of one (opened for this call).
        suite_path: a tracelab suite (YAML), a harness JSON suite or an Assay eval.yaml.
        cases: check only these case ids (`--case`).
        categories: check only cases of these categories (`--category`); an unknown one is an error.
        strict: count a run with an `exercised = no` row as failed.
        allow_ineffective: check a suite the static sweep refuses.
        save: write `check_runs` / `check_results` (never on a read-only store).
        since: the run id of an earlier saved check of the same suite: evaluate only the runs
            ingested after it started and keep its verdicts for the others (`--since`).
        rows: the verdict rows the result must hold, as `check --engine spark` takes it: "all"
            (`CheckRun.verdicts` lists every one), or "none" (what the text report reads: counts,
            case verdicts, failing assertions with their first examples). A full check has every
            row at hand either way; with `since` and "none", the earlier check's rows are not read
            where its saved summaries can be continued (`results.summaries.saved_summaries`).

    Raises:
        SuiteError: an invalid, ineffective or contradictory suite.
        UsageError: an unknown case or category.
        StoreError: the store cannot be opened.
        Interrupted: Ctrl-C or SIGTERM stopped the check; nothing of it was saved.
    """
    from tracelab.store import Store, open_store

    if rows not in ("none", "all"):
        raise ValueError(f"rows={rows!r}: none or all")
    if not isinstance(store, Store):
        with open_store(store, read_only=not save, create=False) as opened:
            return check(opened, suite_path, cases=cases, categories=categories, strict=strict,
                         allow_ineffective=allow_ineffective, save=save, since=since, rows=rows)
    from tracelab.engine.evaluate import choose_cases, evaluate
    from tracelab.results.summaries import continued, saved_summaries
    from tracelab.suite import load_suite

    started = datetime.now(timezone.utc)
    clock = time.perf_counter()
    suite = load_suite(suite_path)
    chosen = choose_cases(suite, cases, categories)  # an unknown case or category: refused before anything runs
    if not allow_ineffective:
        refuse_findings(suite)
    watermark = None if since is None else previous_run(store, suite, since, chosen)
    kept = (saved_summaries(store.con, since, chosen, strict, watermark)
            if since is not None and watermark is not None and rows == "none" else None)
    run_id = uuid.uuid4().hex[:16]
    saved = save and not store.read_only
    try:
        with check_memory(store.con), read_ahead(store, since if kept is None else None, chosen, watermark) as carried:
            result = evaluate(store.con, suite, cases=cases, categories=categories, strict=strict,
                              since=watermark, carried=carried)
            if kept is not None:  # the earlier check's summaries and the new runs': none of its rows read
                result = continued(result, kept, chosen)
            elapsed_ms = round((time.perf_counter() - clock) * 1000)
            if saved:
                _save(store, suite, result, run_id, started, elapsed_ms, since, watermark)  # one transaction
    except BaseException as exc:
        if is_interrupt(exc):
            raise Interrupted("interrupted: the check stopped before it finished; no result of it "
                              "was saved") from None
        raise
    return CheckRun(result, suite, run_id, str(store.path), elapsed_ms, saved)


@contextmanager
def check_memory(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """`CHECK_MEMORY_LIMIT` on `con` while the block runs, the connection's own limit restored
    after; nothing changes when TRACELAB_MEMORY_LIMIT is set or the configuration is locked."""
    import duckdb

    if os.environ.get("TRACELAB_MEMORY_LIMIT"):
        yield
        return
    try:
        [(before,)] = con.execute("SELECT current_setting('memory_limit')").fetchall()
        con.execute("SET memory_limit = ?", [CHECK_MEMORY_LIMIT])
    except duckdb.Error:  # a sealed store: its configuration is locked
        yield
        return
    try:
        yield
    finally:
        con.execute("SET memory_limit = ?", [before])


def previous_run(store: Store, suite: Suite, run_id: str, chosen: tuple[Case, ...]) -> datetime:
    """When run `run_id` started (`check --since`), once it is one the check can continue.

    Raises:
        UsageError: no such saved run, another suite (or another version of it), a run
            saved before the tool effects last changed, or a run that did not check every
            chosen case.
    """
    from tracelab.results.saved import has_saved_checks

    # a Parquet store has check_runs only once a check saved into it (`check --engine spark`)
    rows = store.con.execute("SELECT started_at, suite_sha256, cases FROM check_runs WHERE run_id = ?",
                             [run_id]).fetchall() if has_saved_checks(store.con) else []
    if not rows:
        raise UsageError(f"--since {run_id}: no saved check run with that id "
                         "(see `tracelab sql \"SELECT * FROM check_runs\"`)")
    started, sha256, checked = rows[0]
    if sha256 != suite.sha256:
        raise UsageError(f"--since {run_id}: that run checked another suite or another version of "
                         f"{suite.path}; run a full check first")
    from tracelab.store.effects import changed_at

    changed = changed_at(store.con)
    if changed is not None and changed > started:
        raise UsageError(f"--since {run_id}: the tool effects changed after that check (`tracelab effects`), "
                         "so its verdicts no longer hold; run a full check")
    missing = [case.id for case in chosen if case.id not in (checked or [])]
    if missing:
        raise UsageError(f"--since {run_id}: that run did not check case {missing[0]!r}; run a full check first")
    return started


@contextmanager
def read_ahead(store: Store, run_id: str | None, chosen: tuple[Case, ...], watermark: datetime | None
               ) -> Iterator[Callable[[], Carried] | None]:
    """What saved check `run_id` found for the chosen cases and the runs not (re-)ingested after
    `watermark` (`check --since`; None without one), read on a cursor of its own in a thread while
    the block runs: the check's selection and family statements over the new runs leave a CPU mostly
    idle (at 1M + 10k runs, reading the earlier check's 2.4M rows took 0.47 s before them). The
    function returned waits for the rows; leaving the block early (an error, Ctrl-C) interrupts the read."""
    if run_id is None or watermark is None:
        yield None
        return
    from concurrent.futures import ThreadPoolExecutor

    from tracelab.results.saved import saved_rows

    cursor = store.con.cursor()
    try:
        with ThreadPoolExecutor(max_workers=1) as pool:
            future = pool.submit(saved_rows, cursor, run_id, [case.id for case in chosen], watermark)
            try:
                yield future.result
            finally:
                if not future.done():
                    cursor.interrupt()
    finally:
        cursor.close()


def _save(store: Store, suite: Suite, result: CheckResult, run_id: str, started: datetime,
          elapsed_ms: int, since: str | None, watermark: datetime | None) -> None:
    con = store.con
    con.begin()
    try:
        from tracelab.results.saved import view_rows
        from tracelab.results.summaries import AggregatedResult, save_summaries, summaries_of, view_rows_of
        from tracelab.sqlfiles import run_script

        # the rows that are not plain passes, and the runs each case selected: check_results lists
        # them with the plain passes. Those an earlier check found (`--since`) are kept by reference
        # to it; the fresh ones are saved from the frames, as are the rows `view` reads and the
        # summaries a later `--since` continues from.
        if isinstance(result, AggregatedResult) and result.fresh is not None:
            # `--since` merged from the earlier check's summaries (summaries.continued)
            notable, selection = result.fresh
            rows, summaries = result.view_rows or {}, result.summaries
        else:
            kept_notable, kept_selection = result.carried
            notable, selection = result.notable.slice(kept_notable), result.selection.slice(kept_selection)
            # the parts of kept rows are known only where they are of one check (summaries_of)
            summaries = summaries_of(result) if since is None or not _chained(con, since) else None
            # what `tracelab view` reads: from the summaries where there are some
            rows = view_rows(result) if summaries is None else view_rows_of(result, summaries)
        con.execute("INSERT INTO check_runs (run_id, suite, suite_sha256, started_at, elapsed_ms, cases, "
                    "since_run, failed_cases, runs, runs_failed, tools) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [run_id, suite.name, suite.sha256, started, elapsed_ms,
                     [case.id for case in result.cases], since,
                     [case.id for case in result.cases if not case.passed], result.summary.runs,
                     result.runs_failed,
                     tool_overrides(suite)])
        if since is not None:
            run_script(con, "results/save/carried", {"run_id": run_id, "previous": since, "since": watermark})
        for table, frame in (("check_exceptions", notable), ("check_selected", selection), *rows.items()):
            _insert_frame(con, table, frame, run_id)
        if summaries is not None:
            save_summaries(con, run_id, result.strict, summaries)
        con.commit()
    except BaseException:
        # rolled back first: in a transaction an interrupt aborted, unregistering would raise instead
        con.rollback()
        con.unregister("chk_saved")
        raise


def _chained(con: duckdb.DuckDBPyConnection, run_id: str) -> bool:
    """Whether saved check `run_id` kept rows of an earlier check (a `check --since` run)."""
    return bool(con.execute("SELECT count(*) FROM check_carried WHERE run_id = ? AND depth > 0",
                            [run_id]).fetchall()[0][0])


def _insert_frame(con: duckdb.DuckDBPyConnection, table: str, frame: pl.DataFrame, run_id: str) -> None:
    """Append `frame`'s rows to `table` under `run_id`: DuckDB scans the frame through the Arrow
    PyCapsule interface (no run_id column built per row, and no pyarrow, whose import alone took
    0.1-0.2 s of a check)."""
    from tracelab.frames import ArrowStream

    con.register("chk_saved", ArrowStream(frame))
    con.execute(f"INSERT INTO {table} (run_id, {', '.join(frame.columns)}) SELECT $run_id, * FROM chk_saved",
                {"run_id": run_id})
    con.unregister("chk_saved")


def tool_overrides(suite: Suite) -> list[dict[str, Any]]:
    """The suite's `tools:` effect overrides as check_runs.tools saves them: in suite order, each
    with the RE2 pattern the check matches names with (`compile_suite`'s p_tools)."""
    from tracelab.globs import glob_to_re2, is_glob, literal_re2

    return [{"pattern": pattern, "effect": effect, "is_glob": is_glob(pattern),
             "regex": glob_to_re2(pattern) if is_glob(pattern) else literal_re2(pattern)}
            for pattern, effect in suite.tools]


def envelope(run: CheckRun, suite_path: str | os.PathLike[str], *, all_results: bool = False) -> dict[str, Any]:
    """The whole `check --format json` document of docs/cli.md."""
    from tracelab.version import __version__

    return {
        "tracelab_version": __version__,
        "suite": run.suite.name,
        "suite_path": str(suite_path),
        "suite_sha256": run.suite.sha256,
        "run_id": run.run_id,
        "store": run.store,
        "elapsed_ms": run.elapsed_ms,
        **run.result.to_json_dict(all_results),
    }


__all__ = ["CheckRun", "check", "envelope", "refuse_findings"]
