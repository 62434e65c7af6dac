"""Polars frames handed to DuckDB.

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


__all__ = ["ArrowStream"]
