"""Options shared by several commands."""
from __future__ import annotations

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
