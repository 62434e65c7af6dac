"""`tracelab ingest`."""
from __future__ import annotations

import sys

import click

from tracelab.cli.engine import engine_options, spark_store
from tracelab.cli.options import store_option
from tracelab.errors import DataError, UsageError

DEFAULT_WAIT = 600.0
"""Seconds `--wait` without a value waits for a busy store."""


class _Seconds(click.ParamType):
    """A non-negative number of seconds."""

    name = "seconds"

    def convert(self, value, param, ctx):  # type: ignore[no-untyped-def]
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
              help="Replace stored episodes whose content differs instead of quarantining the new one.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar and no per-file lines.")
@click.option("--wait", type=_Seconds(), is_flag=False, flag_value=DEFAULT_WAIT, default=0.0,
              metavar="[SECONDS]",
              help=f"When another tracelab has the store open, wait for it (up to SECONDS, "
                   f"{DEFAULT_WAIT:g} when none is given) instead of exiting 3 at once.")
@click.option("--buckets", type=click.IntRange(1, 65536), default=None,
              help="With --engine spark: ep_bucket partitions of a new Parquet store (default 16).")
@store_option
@engine_options
def ingest(paths: tuple[str, ...], fmt: str, replace: bool, quiet: bool, wait: float, buckets: int | None,
           store_path: str | None, engine: str, spark_master: str | None) -> None:
    """Load trace files, folders (recursively) or globs into the store.

    Prints episodes added, skipped (already ingested) and quarantined. Bad records
    go to the `quarantine` table; the valid records of the same file still load.
    """
    from tracelab.ingest import expand_paths
    from tracelab.store import open_store

    files = expand_paths(paths)
    if not files:
        raise UsageError(f"no files found in {', '.join(paths)}")
    if engine == "spark":
        from tracelab import spark

        report = spark.ingest(spark_store(store_path), list(paths), fmt, replace=replace, buckets=buckets,
                              master=spark_master, progress=None if quiet else lambda line: click.echo(line, err=True))
        _print_report(report, quiet)
    else:
        if buckets is not None:
            raise click.UsageError("--buckets applies to --engine spark (a DuckDB store has no partitions)")
        with open_store(store_path, wait=wait) as store:
            report = _run_with_progress(store, list(paths), fmt, replace, quiet,
                                        sum(f.stat().st_size for f in files))
            _print_report(report, quiet)
    if report.failed:
        raise DataError(f"{len(report.failed)} file(s) could not be read to the end and loaded nothing")
    if report.count("not-a-trace") == len(report.files):
        raise UsageError(f"no trace files found in {', '.join(paths)}: no format claims any of them")


def _run_with_progress(store, paths, fmt, replace, quiet, total_bytes):  # type: ignore[no-untyped-def]
    if quiet:
        return store.ingest(paths, fmt, replace=replace)
    if not sys.stderr.isatty():
        return store.ingest(paths, fmt, replace=replace, progress=_file_line)
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

    columns = (TextColumn("ingest"), BarColumn(), DownloadColumn(), TimeRemainingColumn())
    with Progress(*columns, transient=True) as bar:
        task = bar.add_task("ingest", total=total_bytes)
        return store.ingest(paths, fmt, replace=replace,
                            progress=lambda _report, size: bar.advance(task, size))


def _file_line(report, _size: int) -> None:  # type: ignore[no-untyped-def]
    """One line per file as it completes (when stderr is not a terminal)."""
    if report.status == "loaded":
        click.echo(f"loaded {report.path} ({report.format}): {report.added} added, "
                   f"{report.skipped} skipped, {report.quarantined} quarantined", err=True)


def _print_report(report, quiet: bool) -> None:  # type: ignore[no-untyped-def]
    for f in report.files:
        if f.status in ("failed", "not-a-trace"):
            label = "failed" if f.status == "failed" else "skipped"
            click.secho(f"{label}: {f.message}", fg="red" if f.status == "failed" else "yellow", err=True)
        elif not quiet and f.status == "already-ingested":
            click.echo(f"already ingested: {f.path}", err=True)
    files = len(report.files)
    click.echo(
        f"{report.added} episodes added, {report.skipped} skipped (already ingested), "
        f"{report.quarantined} quarantined — {files} file{'s' if files != 1 else ''}"
        f" ({report.count('already-ingested')} already ingested, {report.count('not-a-trace')} not traces,"
        f" {report.count('failed')} failed)"
    )
    if report.quarantined and not quiet:
        click.echo('see them: tracelab sql "SELECT source_uri, line, reason FROM quarantine"', err=True)


COMMANDS = [ingest]
