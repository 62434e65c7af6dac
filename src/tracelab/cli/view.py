"""`tracelab view`."""
from __future__ import annotations

import gc
import time

import click

from tracelab.cli.options import check_writable, store_option
from tracelab.errors import Interrupted, is_interrupt
from tracelab.words import plural

MAX_RUNS_CAP = 2**31 - 1
"""`--max-runs` past this is taken as this (more failing runs than any store holds)."""


@click.command()
@click.option("--run", "run_id", metavar="RUN_ID", default=None,
              help="The saved check to show (default: the latest).")
@click.option("--output", "-o", type=click.Path(dir_okay=False), default="tracelab-report.html", show_default=True,
              help="Write the HTML report to this file.")
@click.option("--max-runs", type=click.IntRange(min=1, max=MAX_RUNS_CAP, clamp=True), default=50, show_default=True,
              help="Failing runs per case the file holds (it says how many it leaves out).")
@store_option
def view(run_id: str | None, output: str, max_runs: int, store_path: str | None) -> None:
    """Write a saved check as one self-contained HTML report.

    Summary, cases (failing first) with their assertions and failing runs, each run's step
    timeline with the failing steps highlighted, and the coverage matrix. The file opens in a
    browser from disk: no server, no network request, no other file. Text holding a string the
    check found leaked is never written: a notice names the string instead.
    """
    # Importing Polars and building the report's rows make tens of thousands of objects, short-
    # lived ones that form no cycle and modules that live as long as the command: the collector,
    # run every few hundred allocations, would walk them a few hundred times to free nothing.
    check_writable(output)  # before the report is built (seconds on a large check)
    collecting = gc.isenabled()
    gc.disable()
    try:
        from tracelab.store import open_store
        from tracelab.view import build_report, write_report

        clock = time.perf_counter()
        with open_store(store_path, read_only=True, create=False) as store:
            report = build_report(store, run_id, max_runs=max_runs)
        size = write_report(report, output)
    except BaseException as exc:
        if is_interrupt(exc):  # Ctrl-C, also as DuckDB's InterruptException while a query ran
            raise Interrupted(f"view interrupted: {output} was not written (an earlier file there is unchanged)"
                              ) from None
        raise
    finally:
        if collecting:
            gc.enable()
    s = report.summary
    left_out = sum(case.left_out for case in report.cases)
    note = f"; {plural(left_out, 'failing run')} left out (--max-runs {max_runs})" if left_out else ""
    click.echo(f"wrote {output} ({size / 1e6:.1f} MB) in {time.perf_counter() - clock:.1f} s: check "
               f"{report.run_id}, {s['cases_passed']}/{plural(s['cases'], 'case')} passed, "
               f"{plural(len(report.runs), 'run')} with their steps{note}")


COMMANDS = [view]
