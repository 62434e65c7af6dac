"""The public API: `open_store` gives a `Store` with every capability as a method.

`tracelab.store.Store` (the store stage) opens, ingests, queries and keeps the effect registry.
Checking, coverage, `show` and `view` belong to the stages above it (`tracelab.results`,
`tracelab.view`), which the store may not import (tests/test_layers.py). This module sits above
every stage, with only the CLI above it: its `Store` is the stage's, with those methods added,
and the `open_store` that `import tracelab` offers returns it. It is the one module of the library
that may import every stage; it adds no logic of its own, only calls.

    import tracelab

    with tracelab.open_store("tracelab.duckdb") as store:
        store.ingest(["traces/"])
        run = store.check("suite.yaml")
        print(run.result.summary, store.cover("suite.yaml").table)
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from tracelab import store as _store

if TYPE_CHECKING:
    import polars as pl

    from tracelab.results.check import CheckRun
    from tracelab.results.cover import Coverage
    from tracelab.view import Report
    from tracelab.view.show import Run

StrPath = str | os.PathLike[str]


class Store(_store.Store):
    """An open store: `ingest`, `sql` and `effects` (from `tracelab.store.Store`), and `check`,
    `cover`, `lint`, `show` and `view`. Get one from `open_store`; close it (or use ``with``)."""

    def check(self, suite: StrPath, *, cases: list[str] | None = None, categories: list[str] | None = None,
              strict: bool = False, allow_ineffective: bool = False, save: bool = True,
              since: str | None = None) -> CheckRun:
        """Check a suite against every stored run it selects (`tracelab check`).

        Args:
            suite: a tracelab suite (YAML), a harness JSON suite or an Assay eval.yaml.
            cases: check only these case ids.
            categories: check only the cases of these categories.
            strict: count a run with an `exercised = no` result as failed.
            allow_ineffective: check a suite the static sweep refuses.
            save: keep the results in the store (`check_runs`, `check_results`) for `show` and
                `view`; never on a read-only store.
            since: the run id of an earlier saved check of the same suite: evaluate only the runs
                ingested after it, keeping its verdicts for the others.

        Returns:
            The check: `result` (verdict rows, case verdicts, summary), `run_id`, `passed`.

        Raises:
            SuiteError: an invalid, ineffective or contradictory suite.
            UsageError: an unknown case or category.
        """
        from tracelab.results.check import check

        return check(self, suite, cases=cases, categories=categories, strict=strict,
                     allow_ineffective=allow_ineffective, save=save, since=since)

    def cover(self, suite: StrPath, *, cases: list[str] | None = None,
              categories: list[str] | None = None) -> Coverage:
        """Exercise coverage of a suite over the stored runs (`tracelab cover`); nothing is saved.

        Args:
            suite: the suite file.
            cases: cover only these case ids.
            categories: cover only the cases of these categories.

        Returns:
            The coverage: `table` (a Polars DataFrame, one row per case and assertion),
            `summary()`, `findings` of the static sweep, `render_text()`.

        Raises:
            SuiteError: an invalid suite.
            UsageError: an unknown case or category.
        """
        from tracelab.results.cover import cover

        return cover(self, suite, cases=cases, categories=categories)

    def lint(self, suite: StrPath) -> pl.DataFrame:
        """The findings of `tracelab lint`: the static sweep's, then what the stored runs decide.

        Args:
            suite: the suite file.

        Returns:
            One row per finding: kind, refused, case_id, assertion_id, reason.

        Raises:
            SuiteError: an invalid suite.
        """
        from tracelab.results.cover import lint_report

        return lint_report(suite, self)

    def show(self, episode_id: str, check_run_id: str | None = None) -> Run:
        """One stored run with its steps (`tracelab show`), with the failures of a saved check.

        Args:
            episode_id: the run.
            check_run_id: a saved check (`check(...).run_id`) whose failures to mark.

        Returns:
            The run: `steps`, `failures`; text holding a string the check found leaked withheld.

        Raises:
            UsageError: no run, or no saved check, with that id.
        """
        from tracelab.view.show import show_run

        return show_run(self, episode_id, check_run_id)

    def view(self, output: StrPath = "tracelab-report.html", run_id: str | None = None, *,
             max_runs: int = 50) -> Report:
        """Write a saved check as one self-contained HTML file (`tracelab view`).

        Args:
            output: the file to write (whole, or not at all).
            run_id: the saved check; the latest when None.
            max_runs: failing runs per case the file holds (it says how many it leaves out).

        Returns:
            The report the file shows (`summary`, `cases`).

        Raises:
            UsageError: no saved check (or none with that id), or the file cannot be written.
        """
        from tracelab.view import build_report, write_report

        report = build_report(self, run_id, max_runs=max_runs)
        write_report(report, output)
        return report


def open_store(path: StrPath | None = None, *, read_only: bool = False, create: bool = True,
               wait: float = 0) -> Store:
    """Open (or create) a store: a DuckDB file, or a folder holding a Parquet dataset (read-only).

    The arguments are `tracelab.store.open_store`'s (`path` defaults to `TRACELAB_STORE`, else
    ``./tracelab.duckdb``); the store it returns has every method of the public API.

    Raises:
        StoreError: missing, locked, damaged, or written by an unknown schema version.
    """
    opened = _store.open_store(path, read_only=read_only, create=create, wait=wait)
    return Store(Path(opened.path), opened.con, read_only=opened.read_only, parquet=opened.parquet)


__all__ = ["Store", "open_store"]
