"""`tracelab ingest`."""
from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

import click

from tracelab.cli.engine import engine_options, spark_only, spark_store, target_file_size_option
from tracelab.cli.options import store_option
from tracelab.errors import DataError, UsageError
from tracelab.words import plural

if TYPE_CHECKING:
    from tracelab.ingest.batches import FileReport, IngestReport
    from tracelab.ingest.inputs import Input
    from tracelab.store import Store

DEFAULT_WAIT = 600.0
"""Seconds `--wait` without a value waits for a busy store."""


class _Seconds(click.ParamType[float]):
    """A non-negative number of seconds."""

    name = "seconds"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        try:
            seconds = float(value)
        except (TypeError, ValueError):
            seconds = -1.0
        if not seconds >= 0:  # also refuses NaN
            self.fail(f"{value!r} is not a number of seconds (write `--wait SECONDS`, or put "
                      "`--wait` after the paths)", param, ctx)
        return seconds


@click.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--format", "fmt", default="auto", show_default=True,
              help="Input format name (see `tracelab formats`), or auto to detect per file.")
@click.option("--replace", is_flag=True,
              help="Read files again even when their content hash is recorded, and replace stored "
                   "episodes whose content differs instead of quarantining the new one.")
@click.option("--quiet", "-q", is_flag=True,
              help="Errors and the one-line summary only: no progress bar, no per-file lines.")
@click.option("--agent", default=None, help="The agent of the episodes added whose source names none.")
@click.option("--model", default=None, help="The model of the episodes added whose source names none.")
@click.option("--tag", "tags", multiple=True, help="Add this tag to the episodes added (repeatable).")
@click.option("--wait", type=_Seconds(), is_flag=False, flag_value=DEFAULT_WAIT, default=0.0,
              metavar="[SECONDS]",
              help=f"When another tracelab has the store open, wait for it (up to SECONDS, "
                   f"{DEFAULT_WAIT:g} when none is given) instead of exiting 3 at once.")
@click.option("--buckets", type=click.IntRange(1, 65536), default=None,
              help="With --engine spark: ep_bucket partitions of a new Parquet store (default 16).")
@target_file_size_option
@store_option
@engine_options
def ingest(paths: tuple[str, ...], fmt: str, replace: bool, quiet: bool, agent: str | None, model: str | None,
           tags: tuple[str, ...], wait: float, buckets: int | None, target_file_size: int | None,
           store_path: str | None, engine: str, spark_master: str | None) -> None:
    """Load trace files, folders (recursively) or globs into the store.

    Prints episodes added, skipped (already ingested), merged into an earlier session
    (a Claude Code sub-agent or continuation file) and quarantined, then per format the
    record types its adapter did not read (a newer agent version's: counted, not
    quarantined). Bad records go to the `quarantine` table; the valid records of the
    same file still load.
    --agent and --model fill those fields where the source records none, --tag adds
    tags; episodes already stored are left as they are.
    Once the input passes 32 MB, records are parsed in worker processes, one per
    CPU ($TRACELAB_WORKERS sets how many; 0 parses in this process only).
    """
    from tracelab.ingest.inputs import scan_inputs
    from tracelab.ingest.parse_pool import worker_count
    from tracelab.store import open_store

    for option, value in (("--agent", agent), ("--model", model), *(("--tag", t) for t in tags)):
        if value is not None and not value.strip():
            raise click.UsageError(f"{option} needs a non-empty value")
    spark_only(engine, **{"--target-file-size": target_file_size})
    if engine == "spark":
        from tracelab.spark.layout import TARGET_FILE_SIZE

        if agent or model or tags:
            raise click.UsageError("--agent, --model and --tag apply to --engine duckdb only (a Spark "
                                   "ingest cannot set them yet); ingest without them, or into a DuckDB store")
        from tracelab import spark

        # the driver lists the paths itself: they may be URLs the cluster reads (tracelab.spark)
        report = spark.ingest(spark_store(store_path), list(paths), fmt, replace=replace, buckets=buckets,
                              master=spark_master, wait=wait,
                              target_file_size=target_file_size or TARGET_FILE_SIZE,
                              progress=None if quiet else lambda line: click.echo(line, err=True))
    else:
        if buckets is not None:
            raise click.UsageError("--buckets applies to --engine spark (a DuckDB store has no partitions)")
        inputs = scan_inputs(paths)
        if not inputs:
            raise UsageError(f"no files found in {', '.join(paths)}")
        workers = worker_count()
        with open_store(store_path, wait=wait) as store:
            fill = {"agent": agent, "model": model, "tags": tags}
            report = _run_with_progress(store, inputs, fmt, replace, quiet, workers, fill)
    _print_report(report, quiet)
    if report.failed:
        raise DataError(f"{plural(len(report.failed), 'file')} not loaded: see the failed lines above")
    if report.count("not-a-trace") + report.count("not-a-file") == len(report.files):
        raise UsageError(f"no trace files found in {', '.join(paths)}: no format claims any of them")
    named = {str(p) for p in paths if os.path.isfile(p)}
    unclaimed = [f.path for f in report.files if f.status == "not-a-trace" and f.path in named]
    if unclaimed:  # docs/formats.md, Auto-detection: a file named on the command line must be a trace
        raise UsageError(f"{unclaimed[0]}: no format claims this file (named on the command line); "
                         "give its format with --format, or leave it out")


def _run_with_progress(store: Store, inputs: list[Input], fmt: str, replace: bool, quiet: bool,
                       workers: int, fill: dict[str, Any]) -> IngestReport:
    if quiet:
        return store.ingest(inputs, fmt, replace=replace, workers=workers, **fill)
    if not sys.stderr.isatty():
        return store.ingest(inputs, fmt, replace=replace, progress=_file_line, workers=workers, **fill)
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

    columns = (TextColumn("ingest"), BarColumn(), DownloadColumn(), TimeRemainingColumn())
    with Progress(*columns, transient=True) as bar:
        task = bar.add_task("ingest", total=sum(_size(i.path) for i in inputs if i.skip is None))
        return store.ingest(inputs, fmt, replace=replace, workers=workers,
                            progress=lambda _report, size: bar.advance(task, size), **fill)


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def _file_line(report: FileReport, _bytes: int) -> None:
    """One line per file as it completes, and one per batch of a large file while it loads
    (when stderr is not a terminal)."""
    if report.status == "loading":
        click.echo(f"loading {report.path} ({report.format}): {report.added} added so far", err=True)
    elif report.status == "loaded" and report.merged and not (report.added or report.skipped or report.quarantined):
        click.echo(f"merged {report.path} ({report.format}) into an earlier session", err=True)
    elif report.status == "loaded":
        from tracelab.results.summary import unread_text

        drift = f"; {unread_text(report.unread)}" if report.unread else ""
        merged = f", {report.merged} merged into an earlier session" if report.merged else ""
        click.echo(f"loaded {report.path} ({report.format}): {report.added} added, "
                   f"{report.skipped} skipped{merged}, {report.quarantined} quarantined{drift}", err=True)


def _print_report(report: IngestReport, quiet: bool) -> None:
    for f in report.files:
        if f.status == "failed":
            click.secho(f"failed: {f.message}", fg="red", err=True)
        elif quiet:
            continue
        elif f.status in ("not-a-trace", "not-a-file"):
            click.secho(f"skipped: {f.message}", fg="yellow", err=True)
        elif f.status == "already-ingested":
            click.echo(f"already ingested: {f.path}", err=True)
    click.echo(summary_line(report))
    from tracelab.results.summary import merge_unread, unread_line

    for fmt, counts in merge_unread((f.format, f.unread) for f in report.files).items():
        click.echo(unread_line(fmt, counts))
    if report.quarantined and not quiet:
        click.echo('see them: tracelab sql "SELECT source_uri, line, reason FROM quarantine"', err=True)


def summary_line(report: IngestReport) -> str:
    """`N episodes added, N skipped (already ingested)[, N merged into an earlier session], N quarantined
    — N files (N already ingested, N not traces,[ N not regular files,] N failed)`."""
    merged = f", {report.merged} merged into an earlier session" if report.merged else ""
    not_traces = report.count("not-a-trace")
    not_files = report.count("not-a-file")
    return (f"{plural(report.added, 'episode')} added, {report.skipped} skipped (already ingested){merged}, "
            f"{report.quarantined} quarantined — {plural(len(report.files), 'file')} "
            f"({report.count('already-ingested')} already ingested, "
            f"{not_traces} {'not a trace' if not_traces == 1 else 'not traces'},"
            f"{f' {not_files} not regular files,' if not_files else ''} {report.count('failed')} failed)")


COMMANDS = [ingest]
