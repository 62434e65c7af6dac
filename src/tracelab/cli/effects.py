"""`tracelab effects`: the store's tool effects (docs/trace-format.md §6)."""
from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import click

from tracelab.cli.options import store_option

if TYPE_CHECKING:
    import polars as pl

_FORMAT = click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table",
                       show_default=True, help="Output format.")


@click.group()
def effects() -> None:
    """Declare which tools read and which write, once per store.

    Formats rarely record a tool's effect; an unknown effect is never read as `read`.
    A declaration counts at once in `calls`, `executed_writes` and every check, without
    re-ingesting. A run's recorded effect wins over the store's; a suite's `tools:` wins
    over both at check time.
    """


@effects.command("list")
@_FORMAT
@store_option
def list_command(fmt: str, store_path: str | None) -> None:
    """The declared patterns, in the order globs are tried."""
    from tracelab.store import open_store

    with open_store(store_path, read_only=True, create=False) as store:
        _emit(store.effects.list(), fmt, empty="no tool effects declared; see `tracelab effects set --help`")


@effects.command("set")
@click.argument("assignments", nargs=-1, required=True, metavar="NAME_OR_GLOB=read|write...")
@click.option("--note", default=None, help="A note kept with each pattern (why, who, ticket).")
@store_option
def set_command(assignments: tuple[str, ...], note: str | None, store_path: str | None) -> None:
    """Declare effects for exact tool names or globs (`*`, `?`, `[...]`).

    Example: tracelab effects set cancel_reservation=write 'update_*=write' get_user=read
    """
    from tracelab.store import open_store
    from tracelab.store.effects import parse_assignments

    mapping = parse_assignments(assignments)
    with open_store(store_path, create=False) as store:
        store.effects.set(mapping, note=note)
    click.echo(f"declared {len(mapping)} tool effect{'s' if len(mapping) != 1 else ''}")


@effects.command("unset")
@click.argument("patterns", nargs=-1, required=True, metavar="NAME_OR_GLOB...")
@store_option
def unset_command(patterns: tuple[str, ...], store_path: str | None) -> None:
    """Remove declared patterns (all or nothing)."""
    from tracelab.store import open_store

    with open_store(store_path, create=False) as store:
        store.effects.unset(patterns)
    click.echo(f"removed {len(set(patterns))} tool effect{'s' if len(set(patterns)) != 1 else ''}")


@effects.command("import")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--note", default=None, help="A note kept with each pattern.")
@store_option
def import_command(file: str, note: str | None, store_path: str | None) -> None:
    """Declare the effects of a YAML or JSON mapping, shaped like a suite's `tools:`."""
    from tracelab.store import open_store

    with open_store(store_path, create=False) as store:
        count = store.effects.load(file, note=note)
    click.echo(f"declared {count} tool effect{'s' if count != 1 else ''} from {file}")


@effects.command("unknown")
@_FORMAT
@store_option
def unknown_command(fmt: str, store_path: str | None) -> None:
    """The tools called with an unknown effect, most called first, with call and run counts."""
    from tracelab.store import open_store

    with open_store(store_path, read_only=True, create=False) as store:
        _emit(store.effects.unknown(), fmt, empty="every call has a known effect")


def _emit(frame: pl.DataFrame, fmt: str, *, empty: str) -> None:
    from tracelab.cli.query import render_table

    if fmt == "json":
        click.echo(json.dumps(frame.to_dicts(), default=str, ensure_ascii=False))
    elif frame.height == 0:
        click.echo(empty)
    else:
        click.echo(render_table(frame, color=sys.stdout.isatty()), nl=False)


COMMANDS = [effects]
