"""`--engine` and `--spark-master`: the options shared by ingest, check and cover (tracelab.spark)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


def engine_options(func: F) -> F:
    """``--engine duckdb|spark`` and ``--spark-master URL``."""
    func = click.option(
        "--spark-master", "spark_master", metavar="URL", default=None,
        help="With --engine spark: the cluster. Default: $TRACELAB_SPARK_MASTER, else Spark Connect's "
             "$SPARK_REMOTE, else local[*].",
    )(func)
    return click.option(
        "--engine", type=click.Choice(["duckdb", "spark"]), default="duckdb", show_default=True,
        help="duckdb: this machine. spark: Apache Spark over a store of Delta Lake tables, a folder "
             "or an object-store URL (pip install 'tracelab[spark]'), with the same results.",
    )(func)


def spark_store(store_path: str | None) -> str:
    """The Delta store (folder or URL) of a Spark command: --store, else $TRACELAB_STORE (no default file)."""
    import os

    from tracelab.errors import UsageError

    path = store_path or os.environ.get("TRACELAB_STORE")
    if not path:
        raise UsageError("--engine spark needs --store DIR (a Delta store folder or URL)")
    return path
