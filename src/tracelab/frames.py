"""Polars frames handed to DuckDB, and frames as Arrow IPC bytes (a Spark task's partial
summaries, a check's saved ones: `results.summaries`).

Kept apart from `tracelab.suite` so that commands which only read (`show`, `view`) register
a frame without importing the suite compiler, whose import is a large share of a short command.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl


class ArrowStream:
    """A Polars frame as DuckDB scans it, through the Arrow PyCapsule interface (registering the
    frame itself would go through pyarrow, whose import alone outweighs a short command's work)."""

    def __init__(self, frame: pl.DataFrame) -> None:
        self.frame = frame

    def __arrow_c_stream__(self, requested_schema: object = None) -> object:
        return self.frame.__arrow_c_stream__(requested_schema)


def to_ipc(frame: pl.DataFrame) -> bytes:
    """`frame` as the bytes of an Arrow IPC file."""
    import io

    sink = io.BytesIO()
    frame.write_ipc(sink)
    return sink.getvalue()


def from_ipc(data: bytes) -> pl.DataFrame:
    """The frame of the bytes of an Arrow IPC file (`to_ipc`)."""
    import io

    import polars as pl

    return pl.read_ipc(io.BytesIO(data))


__all__ = ["ArrowStream", "from_ipc", "to_ipc"]
