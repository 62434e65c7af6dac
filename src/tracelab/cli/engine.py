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


_UNITS = {"": 1, "B": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30}


class _Bytes(click.ParamType[int]):
    """A size in bytes: a number, with KB, MB or GB (powers of 1024)."""

    name = "size"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        text = str(value).strip().upper().replace(" ", "")
        number = text.rstrip("KMGB")
        unit = text[len(number):]
        try:
            size = int(float(number) * _UNITS[unit])
        except (KeyError, ValueError):
            size = 0
        if size < 1024:
            self.fail(f"{value!r} is not a size of at least 1 KB (write e.g. 128MB)", param, ctx)
        return size


def target_file_size_option(func: F) -> F:
    """``--target-file-size SIZE``: bytes per data file a Spark ingest or check writes."""
    return click.option(
        "--target-file-size", "target_file_size", type=_Bytes(), default=None, metavar="SIZE",
        help="With --engine spark: the size of each data file written into the store's tables "
             "(KB, MB, GB: powers of 1024; default 128MB); a table's bucket holds about its bytes / SIZE files.",
    )(func)


def spark_only(engine: str, **given: object) -> None:
    """Refuse options of `--engine spark` given with the DuckDB engine (one line naming the first)."""
    for option, value in given.items():
        if engine != "spark" and value is not None:
            raise click.UsageError(f"{option} applies to --engine spark")


def spark_store(store_path: str | None) -> str:
    """The Delta store (folder or URL) of a Spark command: --store, else $TRACELAB_STORE (no default file)."""
    import os

    from tracelab.errors import UsageError

    path = store_path or os.environ.get("TRACELAB_STORE")
    if not path:
        raise UsageError("--engine spark needs --store DIR (a Delta store folder or URL)")
    return path
