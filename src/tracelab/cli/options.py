"""Options shared by several commands."""
from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


def store_option(func: F) -> F:
    """``--store PATH``: a DuckDB file or a Parquet folder (default: $TRACELAB_STORE, else ./tracelab.duckdb)."""
    return click.option(
        "--store", "store_path", metavar="PATH", default=None,
        help="Store: a DuckDB file or a Parquet folder. Default: $TRACELAB_STORE, else ./tracelab.duckdb.",
    )(func)


def echo_document(document: str | bytes) -> None:
    """Write a rendered report to standard output as it is (no newline added).

    Bytes (UTF-8 JSON) go to the stream's binary buffer, so that a large report is not decoded
    only to be encoded again; a stream without one (a test's StringIO) gets the decoded text.
    """
    if isinstance(document, bytes):
        buffer = getattr(sys.stdout, "buffer", None)
        if buffer is not None:
            sys.stdout.flush()
            buffer.write(document)
            buffer.flush()
            return
        document = document.decode()
    click.echo(document, nl=False)
