"""Scale-out on Apache Spark: `ingest`, `check` and `cover` with the same verdicts as DuckDB.

`pip install 'tracelab[spark]'`. pyspark is imported only when a Spark function runs, never by
`tracelab` itself. See `tracelab.spark.engine` for the design and README "More than one machine".

Beside the stages: runs the same library code per partition, so it may import every stage up to
`tracelab.results` (not `view`, not `cli`); no stage imports it, only the CLI.
"""
from __future__ import annotations

from typing import Any

__all__ = ["check", "cover", "ingest", "session"]


def __getattr__(name: str) -> Any:
    # lazily: importing tracelab.spark must not start (or even import) Spark
    if name in __all__:
        from tracelab.spark import engine

        return getattr(engine, name)
    raise AttributeError(name)
