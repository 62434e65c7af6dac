"""`tracelab cover` and `tracelab lint`."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from tracelab.cli.engine import engine_options, spark_store
from tracelab.cli.options import (
    check_writable,
    echo_document,
    output_option,
    require_suite_file,
    store_option,
    write_output,
)
from tracelab.results.report import indented_json


@click.command()
@click.argument("suite", type=click.Path(dir_okay=False))
@click.option("--category", "categories", multiple=True, help="Cover only cases of this category (repeatable).")
@click.option("--case", "cases", multiple=True, help="Cover only this case id (repeatable).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="Report format.")
@output_option
@store_option
@engine_options
def cover(suite: str, categories: tuple[str, ...], cases: tuple[str, ...], fmt: str, output: str | None,
          store_path: str | None, engine: str, spark_master: str | None) -> None:
    """Exercise coverage of SUITE across the stored runs, per case and assertion.

    For each assertion: its runs, passes, failures, and how many runs exercised it
    (yes / no / unknown), with the reasons for `no` grouped and counted. Assertions no
    run could have failed come first, then those exercised in under 10% of their runs.
    Saves nothing; exit 0 unless the suite or the store is unusable.
    """
    from tracelab.results.cover import cover as measure
    from tracelab.store import open_store

    require_suite_file(suite)
    check_writable(output)
    if engine == "spark":
        from tracelab import spark

        result = spark.cover(spark_store(store_path), suite, cases=list(cases) or None,
                             categories=list(categories) or None, master=spark_master)
    else:
        with open_store(store_path, read_only=True, create=False) as store:
            result = measure(store, suite, cases=list(cases) or None, categories=list(categories) or None)
    _write(indented_json(result.to_json_dict(suite)) if fmt == "json" else result.render_text(), output)


@click.command()
@click.argument("suite", type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="Report format.")
@output_option
@store_option
def lint(suite: str, fmt: str, output: str | None, store_path: str | None) -> None:
    """The static sweep of SUITE, and with a store what the stored runs decide.

    Refused: ineffective assertions (cannot fail on any trace) and contradictory ones
    (cannot pass). With a store (--store, $TRACELAB_STORE, or ./tracelab.duckdb when it
    exists): cases that select no run, cases with `select: {}`, and assertions that no
    stored run could have failed. Exit 2 on a refused finding, 1 when only store
    findings remain, 0 when clean.
    """
    from tracelab.results.cover import lint_exit_code, lint_json_dict, lint_report, render_lint_text

    require_suite_file(suite)
    check_writable(output)
    store = _lint_store(store_path)
    findings = lint_report(suite, store)
    _write(indented_json(lint_json_dict(findings, suite, store)) if fmt == "json"
           else render_lint_text(findings, suite, store), output)
    sys.exit(lint_exit_code(findings))


def _write(document: str | bytes, output: str | None) -> None:
    """The report to standard output, or whole to `output`."""
    if output is None:
        echo_document(document)
    else:
        write_output(output, document)


def _lint_store(store_path: str | None) -> str | None:
    """The store lint reads: the one named (which must exist), else the default one if it exists."""
    from tracelab.store import DEFAULT_STORE

    named = store_path or os.environ.get("TRACELAB_STORE")
    if named:
        return named
    return DEFAULT_STORE if Path(DEFAULT_STORE).exists() else None


COMMANDS = [cover, lint]
