"""`tracelab sql`, `tracelab info`, `tracelab export`."""
from __future__ import annotations

import sys
from pathlib import Path

import click

from tracelab.cli.options import store_option
from tracelab.errors import UsageError


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
    with open_store(store_path, read_only=not write, create=False) as store:
        if not write:
            store.con.execute("SET enable_external_access = false")
        frame = store.sql(query)
    _emit(frame, fmt, output)


def _emit(frame, fmt: str, output: str | None) -> None:  # type: ignore[no-untyped-def]
    if fmt == "parquet":
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


def _flat(frame):  # type: ignore[no-untyped-def]
    """CSV holds no lists or structs (`tags`, `check_runs.cases`): write them as JSON text."""
    import json

    import polars as pl

    nested = [name for name, dtype in frame.schema.items() if dtype.is_nested()]
    return frame.with_columns(
        pl.Series(name, [None if v is None else json.dumps(v, ensure_ascii=False, separators=(",", ":"), default=str)
                         for v in frame[name].to_list()], dtype=pl.String)
        for name in nested
    )


def render_table(frame, *, color: bool) -> str:  # type: ignore[no-untyped-def]
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

    with open_store(store_path, read_only=True, create=False) as store:
        summary = store_summary(store)
    click.echo(f"store: {summary['store']}")
    for table, count in summary["tables"].items():
        click.echo(f"  {table:<17} {count:>10,}")
    click.echo("formats: " + (", ".join(f"{k} ({v} files)" for k, v in summary["formats"]) or "none"))
    click.echo("agents:  " + (", ".join(f"{k or '(none)'} ({v})" for k, v in summary["agents"]) or "none"))
    click.echo(f"tools declared: {summary['declared']:,} episodes, unknown: {summary['undeclared']:,}")
    click.echo(f"executed writes: {summary['writes']:,}")
    if summary["tables"]["quarantine"]:
        click.echo('quarantine: tracelab sql "SELECT source_uri, line, reason FROM quarantine"')


def store_summary(store) -> dict:  # type: ignore[no-untyped-def]
    """What `info` prints, as data."""
    from tracelab.store import TABLES

    con = store.con
    tables = {t: con.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0] for t in TABLES}
    formats = con.execute("SELECT format, count(*) FROM sources GROUP BY 1 ORDER BY 2 DESC, 1").fetchall()
    agents = con.execute(
        "SELECT agent, count(*) FROM episodes GROUP BY 1 ORDER BY 2 DESC, 1 NULLS LAST LIMIT 10"
    ).fetchall()
    declared, undeclared = con.execute(
        "SELECT count(*) FILTER (WHERE tools_declared), count(*) FILTER (WHERE NOT tools_declared) "
        "FROM episodes"
    ).fetchall()[0]
    writes = con.execute("SELECT count(*) FROM executed_writes").fetchall()[0][0]
    return {"store": str(store.path), "tables": tables, "formats": formats, "agents": agents,
            "declared": declared, "undeclared": undeclared, "writes": writes}


@click.command()
@click.argument("folder", type=click.Path(file_okay=False))
@click.option("--overwrite", is_flag=True,
              help="Replace the earlier export FOLDER holds (written beside it, swapped at the end).")
@store_option
def export(folder: str, overwrite: bool, store_path: str | None) -> None:
    """Write the store as a Parquet dataset (Hive-partitioned), readable as a store with --store FOLDER."""
    from tracelab.store import open_store

    with open_store(store_path, read_only=True, create=False) as store:
        counts = store.export(folder, overwrite=overwrite)
    click.echo(f"exported to {folder}: " + ", ".join(f"{t} {n:,}" for t, n in counts.items()))


COMMANDS = [sql_command, info, export]
