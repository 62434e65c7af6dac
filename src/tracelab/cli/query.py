"""`tracelab sql`, `tracelab info`, `tracelab export`."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from tracelab.cli.options import store_option
from tracelab.errors import UsageError

if TYPE_CHECKING:
    import polars as pl


@click.command("sql")
@click.argument("query")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json", "parquet"]),
              default="table", show_default=True, help="Output format.")
@click.option("--output", "-o", type=click.Path(dir_okay=False), default=None,
              help="Write to this file instead of standard output (required for parquet).")
@click.option("--write", is_flag=True,
              help="Allow statements that modify the store or touch files (off by default).")
@store_option
def sql_command(query: str, fmt: str, output: str | None, write: bool, store_path: str | None) -> None:
    """Run an ad-hoc SQL query over the store (read-only unless --write).

    Tables: episodes, steps, tool_calls, tool_definitions, quarantine, sources,
    check_runs, check_results; views: executed_writes, transcript; macro:
    tool_availability('tool').
    """
    from tracelab.store import open_store

    if fmt == "parquet" and output is None:
        raise UsageError("--format parquet needs --output FILE")
    # read-only, the store runs no statement that writes and touches no file (`Store.sql`)
    with open_store(store_path, read_only=not write, create=False) as store:
        frame = store.sql(query)
    _emit(frame, fmt, output)


def _emit(frame: pl.DataFrame, fmt: str, output: str | None) -> None:
    if fmt == "parquet" and output is not None:  # sql_command requires --output for parquet
        frame.write_parquet(output)
        return
    if fmt == "csv":
        text = _flat(frame).write_csv()
    elif fmt == "json":
        text = frame.write_json() + "\n"
    else:
        text = render_table(frame, color=output is None and sys.stdout.isatty())
    if output is None:
        click.echo(text, nl=False)
    else:
        Path(output).write_text(text, encoding="utf-8")


def _flat(frame: pl.DataFrame) -> pl.DataFrame:
    """CSV holds no lists or structs (`tags`, `check_runs.cases`): write them as JSON text."""
    import json

    import polars as pl

    nested = [name for name, dtype in frame.schema.items() if dtype.is_nested()]
    return frame.with_columns(
        pl.Series(name, [None if v is None else json.dumps(v, ensure_ascii=False, separators=(",", ":"), default=str)
                         for v in frame[name].to_list()], dtype=pl.String)
        for name in nested
    )


def render_table(frame: pl.DataFrame, *, color: bool) -> str:
    """A readable text table of a Polars frame (every row, full values)."""
    from rich.console import Console
    from rich.table import Table

    table = Table(show_lines=False, header_style="bold" if color else None, box=None if not color else None)
    for name in frame.columns:
        table.add_column(name, overflow="fold")
    for row in frame.iter_rows():
        table.add_row(*("NULL" if v is None else str(v) for v in row))
    console = Console(record=True, width=max(80, min(200, 16 * len(frame.columns))),
                      force_terminal=color, no_color=not color, file=open("/dev/null", "w"))
    console.print(table)
    console.print(f"({frame.height} row{'s' if frame.height != 1 else ''})")
    return console.export_text(styles=color)


@click.command()
@store_option
def info(store_path: str | None) -> None:
    """Counts per table, formats, agents and quarantine size."""
    from tracelab.store import open_store
    from tracelab.summary import summarize

    with open_store(store_path, read_only=True, create=False) as store:
        summary = summarize(store)
    click.echo(f"store: {summary.store}")
    for table, count in summary.tables.items():
        click.echo(f"  {table:<17} {count:>10,}")
    click.echo("formats: " + (", ".join(f"{k} ({v} files)" for k, v in summary.formats) or "none"))
    click.echo("agents:  " + (", ".join(f"{k or '(none)'} ({v})" for k, v in summary.agents) or "none"))
    click.echo(f"tools declared: {summary.declared:,} episodes, unknown: {summary.undeclared:,}")
    unknown = summary.unknown_effect
    click.echo(f"executed writes: {summary.writes:,}; {unknown:,} call{' has' if unknown == 1 else 's have'} "
               "an unknown effect" + (": see `tracelab effects unknown`" if unknown else ""))
    if summary.tables["quarantine"]:
        click.echo('quarantine: tracelab sql "SELECT source_uri, line, reason FROM quarantine"')


@click.command()
@click.argument("folder", type=click.Path(file_okay=False))
@store_option
def export(folder: str, store_path: str | None) -> None:
    """Write the store as a Parquet dataset (Hive-partitioned), readable as a store with --store FOLDER."""
    from tracelab.store import open_store

    with open_store(store_path, read_only=True, create=False) as store:
        counts = store.export(folder)
    click.echo(f"exported to {folder}: " + ", ".join(f"{t} {n:,}" for t, n in counts.items()))


COMMANDS = [sql_command, info, export]
