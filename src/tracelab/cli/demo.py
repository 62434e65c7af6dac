"""`tracelab demo`: the five-minute tour on the sample traces, in one command."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from tracelab.cli.options import store_option
from tracelab.cli.query import render_table

if TYPE_CHECKING:
    from tracelab.store import Store

LEAK_NEEDLE = "sk-live-"


@click.command()
@click.argument("traces", type=click.Path(exists=True, file_okay=False), default="sample_traces")
@store_option
def demo(traces: str, store_path: str | None) -> None:
    """Ingest TRACES (default: sample_traces/), show counts, executed writes and a leak search,
    then check TRACES/suite.yaml when there is one and show its coverage. Exits 0 even when the sample suite has
    failing cases: they are there to be shown.
    """
    from tracelab.results.summary import executed_writes, runs_mentioning, summarize
    from tracelab.store import open_store
    from tracelab.words import plural

    with open_store(store_path) as store:
        report = store.ingest([traces])
        click.secho(f"== ingest {traces}", bold=True)
        merged = f", {report.merged} merged into an earlier session" if report.merged else ""
        not_traces = report.count("not-a-trace")
        click.echo(f"{plural(report.added, 'episode')} added, {report.skipped} skipped{merged}, "
                   f"{report.quarantined} quarantined, {plural(not_traces, 'file')} not "
                   f"{'a trace' if not_traces == 1 else 'traces'}")
        summary = summarize(store)
        click.secho("== what is in the store", bold=True)
        for table, count in summary.tables.items():
            click.echo(f"  {table:<17} {count:>8,}")
        click.secho("== executed writes (tool calls with effect write that ran)", bold=True)
        click.echo(render_table(executed_writes(store), color=False), nl=False)
        _declare_effects(store, Path(traces) / "effects.yaml")
        click.secho(f"== which runs leaked a string containing {LEAK_NEEDLE!r}, and where", bold=True)
        click.echo(render_table(runs_mentioning(store, LEAK_NEEDLE), color=False), nl=False)
        suite = Path(traces) / "suite.yaml"
        if suite.is_file():
            _check(store, suite)


def _declare_effects(store: Store, path: Path) -> None:
    """Declare TRACES/effects.yaml, when there is one, and show the executed writes it reveals."""
    from tracelab.results.summary import executed_write_count
    from tracelab.words import plural

    if not path.is_file():
        return
    before = executed_write_count(store)
    count = store.effects.load(path)
    click.secho(f"== tracelab effects import {path} (what the sample tools do: {count} names and globs)",
                bold=True)
    after = executed_write_count(store)
    unknown = store.effects.unknown_calls()
    click.echo(f"executed writes: {before} before, {after} after; {plural(unknown, 'call')} still "
               f"{'has' if unknown == 1 else 'have'} an unknown effect (`tracelab effects unknown`)")


def _check(store: Store, suite: Path) -> None:
    """Run the sample suite and print its report. Failing cases are the point of the demo: exit 0."""
    from tracelab.results.check import check
    from tracelab.results.cover import Coverage
    from tracelab.results.report import render_text

    run = check(store, suite)
    click.secho(f"== tracelab cover {suite} (what could not have failed)", bold=True)
    click.echo(Coverage(run).render_text(full=False), nl=False)
    click.secho(f"== tracelab check {suite}", bold=True)
    click.echo(render_text(run), nl=False)


COMMANDS = [demo]
