"""Options shared by several commands."""
from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from tracelab.errors import UsageError
from tracelab.outputs import Document, write_file

F = TypeVar("F", bound=Callable[..., Any])


STORE_KEY = "tracelab.store"
"""Where a command's `--store` value is kept in its context's `meta` (None: the default store),
for the error boundary to name the store a DuckDB error came from."""


def store_option(func: F) -> F:
    """``--store PATH``: a DuckDB file or a Parquet folder (default: $TRACELAB_STORE, else ./tracelab.duckdb)."""
    return click.option(
        "--store", "store_path", metavar="PATH", default=None, callback=_remember_store,
        help="Store: a DuckDB file or a Parquet folder. Default: $TRACELAB_STORE, else ./tracelab.duckdb.",
    )(func)


def _remember_store(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    ctx.meta[STORE_KEY] = value
    return value


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


def output_option(func: F) -> F:
    """``--output/-o FILE``: write the report to FILE instead of standard output."""
    return click.option("--output", "-o", type=click.Path(dir_okay=False), default=None,
                        help="Write the report to this file instead of standard output.")(func)


def require_suite_file(suite: str) -> None:
    """Refuse a SUITE argument that names no file, with one `error:` line like any usage error.

    Raises:
        UsageError: no such file.
    """
    if not Path(suite).is_file():
        raise UsageError(f"{suite}: no such suite file")


def check_writable(path: str | None) -> None:
    """Refuse an output path that cannot be written, before any work is done.

    A symlink is judged by the file it points to; a device or a FIFO by itself (it is written
    through: `tracelab.outputs`).

    Raises:
        UsageError: the folder is missing or not writable, or the path is a folder.
    """
    if path is None:
        return
    target = Path(os.path.realpath(path))
    folder = target.parent
    if target.is_dir():
        raise UsageError(f"{path}: is a folder; give a file name to write to")
    if target.exists() and not target.is_file():
        if not os.access(target, os.W_OK):
            raise UsageError(f"{path}: cannot write there: permission denied")
        return
    if not folder.is_dir():
        raise UsageError(f"{path}: cannot write there: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK) or (target.exists() and not os.access(target, os.W_OK)):
        raise UsageError(f"{path}: cannot write there: permission denied")


def write_output(path: str, document: Document) -> None:
    """Write a report file (`tracelab.outputs.write_file`): whole or not at all, through a
    temporary created exclusively; a symlink is followed, a device or a FIFO written through.

    Raises:
        UsageError: the file cannot be written (one line, with the system's reason).
    """
    write_file(path, document)


def no_color() -> bool:
    """True when the NO_COLOR environment variable is set and not empty (https://no-color.org)."""
    return bool(os.environ.get("NO_COLOR"))

