"""`tracelab sql`, `tracelab info`, `tracelab export`."""
from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

import click

from tracelab.cli.console import wants_color
from tracelab.cli.options import check_writable, echo_document, store_option, write_output
from tracelab.errors import UsageError
from tracelab.limits import read_capped

if TYPE_CHECKING:
    import polars as pl


class _SqlCommand(click.Command):
    """`tracelab sql`: a query may begin with a `--` comment, which click would take for an option.

    An argument that starts with ``--`` and holds whitespace before any ``=`` is no option name:
    it is moved after a ``--`` (end of options), so it is read as the query wherever it stands.
    """

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if "--" not in args:
            queries = [a for a in args if a.startswith("--") and any(c.isspace() for c in a.split("=", 1)[0])]
            if queries:
                args = [a for a in args if a not in queries] + ["--", *queries]
        return super().parse_args(ctx, args)


@click.command("sql", cls=_SqlCommand)
@click.argument("query", required=False)
@click.option("--file", "-f", "query_file", type=click.Path(dir_okay=False), default=None,
              help="Read the query from this file ('-' for standard input) instead of QUERY.")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json", "parquet"]),
              default="table", show_default=True, help="Output format.")
@click.option("--output", "-o", type=click.Path(dir_okay=False), default=None,
              help="Write to this file instead of standard output (required for parquet).")
@click.option("--write", is_flag=True,
              help="Allow statements that modify the store or touch files (off by default).")
@store_option
def sql_command(query: str | None, query_file: str | None, fmt: str, output: str | None, write: bool,
                store_path: str | None) -> None:
    """Run an ad-hoc SQL query over the store (read-only unless --write).

    QUERY is the SQL text, or '-' to read it from standard input; `--file FILE` reads it from a
    file. Tables: episodes, steps, tool_calls, tool_definitions, tool_effects, quarantine,
    sources, check_runs, check_selected, check_exceptions (what each check evaluated), check_carried,
    check_renewed; views: check_results (every result of every saved check), check_notable_results
    (those that are not plain passes), calls, executed_writes, transcript; macro:
    tool_availability('tool').
    """
    from tracelab.store import open_store, seal

    text = _query_text(query, query_file)
    if fmt == "parquet" and output is None:
        raise UsageError("--format parquet needs --output FILE")
    check_writable(output)
    with open_store(store_path, read_only=not write, create=False) as store:
        if not write:
            seal(store)  # no file, no extension download, no setting changed
        frame = store.sql(text)
    _emit(frame, fmt, output)


def _query_text(query: str | None, query_file: str | None) -> str:
    """The query: QUERY, standard input for '-', or the text of --file."""
    if query is not None and query_file is not None:
        raise UsageError("give the query as QUERY or with --file, not both")
    if query_file is None and query is None:
        raise UsageError("no query: give QUERY, '-' to read it from standard input, or --file FILE")
    if query_file is None and query != "-":
        return query  # type: ignore[return-value]
    if query_file in (None, "-"):
        return sys.stdin.read()
    try:
        return read_capped(str(query_file), "the query").decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UsageError(f"{query_file}: cannot read the query: not valid UTF-8") from None


def _emit(frame: pl.DataFrame, fmt: str, output: str | None) -> None:
    if fmt == "parquet" and output is not None:  # sql_command requires --output for parquet
        write_output(output, frame.write_parquet)
        return
    frame = _printable(frame, fmt)
    if fmt == "csv":
        text = _flat(frame).write_csv()
    elif fmt == "json":
        text = frame.write_json() + "\n"
    else:
        text = render_table(frame, color=output is None and wants_color())
    if output is None:
        click.echo(text, nl=False)
    else:
        write_output(output, text)


def _printable(frame, fmt: str):  # type: ignore[no-untyped-def]
    """`frame` with the columns text formats cannot write as they are, written as text.

    Bytes (BLOB, and DuckDB's VARIANT, which arrives as bytes) become hex in CSV and JSON;
    dates and timestamps outside the years 1 to 9999 (year 0, DuckDB's infinity), which Python
    cannot render, become text: ``infinity``, ``-infinity`` or the instant as Polars writes it.
    """
    import polars as pl

    columns = []
    for name, dtype in frame.schema.items():
        column = pl.col(name)
        if dtype == pl.Binary and fmt in ("csv", "json"):
            columns.append(column.bin.encode("hex"))
        elif isinstance(dtype, (pl.Datetime, pl.Date)) and not _in_range(frame[name]):
            columns.append(_temporal_text(frame[name]))
    return frame.with_columns(columns) if columns else frame


_LOW, _HIGH = 1, 9999
"""The years Python's datetime holds: a table renders every value through it."""


def _year_bounds(series):  # type: ignore[no-untyped-def]
    import datetime as dt

    import polars as pl

    low = pl.Series([dt.datetime(_LOW, 1, 1)]).cast(series.dtype).to_physical()[0] if isinstance(
        series.dtype, pl.Datetime) else (dt.date(_LOW, 1, 1) - dt.date(1970, 1, 1)).days
    high = pl.Series([dt.datetime(_HIGH, 12, 31, 23, 59, 59, 999999)]).cast(series.dtype).to_physical()[0] \
        if isinstance(series.dtype, pl.Datetime) else (dt.date(_HIGH, 12, 31) - dt.date(1970, 1, 1)).days
    return low, high


def _in_range(series) -> bool:  # type: ignore[no-untyped-def]
    low, high = _year_bounds(series)
    physical = series.to_physical().drop_nulls()
    return physical.is_empty() or (physical.min() >= low and physical.max() <= high)


def _temporal_text(series):  # type: ignore[no-untyped-def]
    """Each value as text: DuckDB's infinities (the physical type's largest magnitude) as
    ``infinity`` and ``-infinity``, any other instant (year 0 too) as Polars writes it."""
    import polars as pl

    physical = series.to_physical()
    infinity = (2**63 - 1) if physical.dtype == pl.Int64 else (2**31 - 1)
    finite = physical.abs() < infinity
    safe = series.to_frame().with_columns(
        pl.when(finite).then(pl.col(series.name)).otherwise(None)
    ).to_series().cast(pl.Utf8)
    text = pl.when(finite).then(safe).when(physical > 0).then(
        pl.lit("infinity")).otherwise(pl.lit("-infinity"))
    return pl.select(text.alias(series.name)).to_series()


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

    from tracelab.cli.console import plain, terminal_width

    table = Table(show_lines=False, header_style="bold" if color else None, box=None if not color else None)
    for name in frame.columns:
        table.add_column(plain(name), overflow="fold")
    for row in frame.iter_rows():
        table.add_row(*(plain("NULL" if v is None else v) for v in row))
    # the terminal's width (today's terminals are wide; wrapping at 80 columns hid most columns)
    console = Console(record=True, width=terminal_width(), force_terminal=color, no_color=not color,
                      file=open(os.devnull, "w"), markup=False, emoji=False)  # stored text is never markup
    console.print(table)
    console.print(f"({frame.height} row{'s' if frame.height != 1 else ''})")
    return console.export_text(styles=color)


@click.command()
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="Output format.")
@store_option
def info(fmt: str, store_path: str | None) -> None:
    """Counts per table, formats, agents and quarantine size."""
    from tracelab.results.report import indented_json, printable
    from tracelab.results.summary import summarize, unread_line
    from tracelab.store import open_store
    from tracelab.words import plural

    with open_store(store_path, read_only=True, create=False) as store:
        summary = summarize(store)
    if fmt == "json":
        echo_document(indented_json({
            "store": summary.store, "tables": summary.tables,
            "formats": [{"format": k, "files": v} for k, v in summary.formats],
            "agents": [{"agent": k, "episodes": v} for k, v in summary.agents],
            "agents_total": summary.agents_total,
            "tools_declared": summary.declared, "tools_unknown": summary.undeclared,
            "executed_writes": summary.writes, "calls_with_unknown_effect": summary.unknown_effect,
            "unread": summary.unread}))
        return
    click.echo(f"store: {printable(summary.store)}")
    for table, count in summary.tables.items():
        click.echo(f"  {table:<17} {count:>10,}")
    click.echo("formats: " + (", ".join(f"{printable(k)} ({plural(v, 'file')})" for k, v in summary.formats)
                              or "none"))
    more = summary.agents_total - len(summary.agents)
    click.echo("agents:  " + (", ".join(f"{printable(k) if k else '(none)'} ({v})" for k, v in summary.agents)
                              or "none") + (f", and {plural(more, 'more agent')}" if more else ""))
    click.echo(f"tools declared: {summary.declared:,} episode{'' if summary.declared == 1 else 's'}, "
               f"unknown: {summary.undeclared:,}")
    unknown = summary.unknown_effect
    click.echo(f"executed writes: {summary.writes:,}; {unknown:,} call{' has' if unknown == 1 else 's have'} "
               "an unknown effect" + (": see `tracelab effects unknown`" if unknown else ""))
    for fmt, counts in summary.unread.items():
        click.echo(unread_line(fmt, counts))
    if summary.tables["quarantine"]:
        click.echo('quarantine: tracelab sql "SELECT source_uri, line, reason FROM quarantine"')


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
