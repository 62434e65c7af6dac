"""Appending rows to a store table through Arrow, for ingest and for saving a check's results.

Arrow columns are built from their buffers (`arrow_column`), not with `pyarrow.array` or
`pyarrow.table`: those look for pandas on every call from a Python list or a foreign frame,
and importing pandas, where it is installed, would outweigh a short command's own work.
"""
from __future__ import annotations

from array import array
from collections.abc import Sequence
from datetime import datetime, timezone
from itertools import accumulate
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import duckdb
    import pyarrow as pa

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MICROSECOND = datetime.resolution


def insert_arrow(con: duckdb.DuckDBPyConnection, table: str, columns: Any) -> None:
    """Append rows to `table` through Arrow (DuckDB's executemany is slow).

    `columns` is a dict of equal-length lists (`arrow_table`), a Polars DataFrame or an Arrow
    table; its column names say which columns of `table` are filled.
    """
    if isinstance(columns, dict):
        batch = arrow_table(columns)
    else:  # a Polars DataFrame (as Arrow: its names come with it), or an Arrow table
        batch = columns.to_arrow() if hasattr(columns, "to_arrow") else columns
    con.register("_tl_insert", batch)
    con.execute(f"INSERT INTO {table} ({', '.join(batch.column_names)}) SELECT * FROM _tl_insert")
    con.unregister("_tl_insert")


def arrow_table(columns: dict[str, Sequence[Any] | pa.Array]) -> pa.Table:
    """An Arrow table of equal-length lists, each column as `arrow_column` builds it (or an
    Arrow array built already)."""
    import pyarrow as pa

    return pa.Table.from_arrays([values if isinstance(values, pa.Array) else arrow_column(values)
                                 for values in columns.values()], names=list(columns))


def arrow_column(values: Sequence[Any], kind: pa.DataType | None = None) -> pa.Array:
    """An Arrow array of Python ints, strs (or UTF-8 bytes, such as orjson writes: not checked
    again), or aware datetimes, any of them None; its type is `kind`, else that of its first
    value (int64, string, timestamp[us, UTC]; a column of None only is a string column). Texts
    beyond 2 GiB in all make a large_string column.

    Raises:
        TypeError: values of another type.
    """
    import pyarrow as pa

    count = len(values)
    nulls = values.count(None)
    first = next((value for value in values if value is not None), None)
    if kind is None:
        kind = (pa.int64() if isinstance(first, int) else
                pa.timestamp("us", tz="UTC") if isinstance(first, datetime) else pa.string())
    validity = pa.py_buffer(_validity(values)) if nulls else None
    if pa.types.is_string(kind):
        # JSON documents come as bytes, ten thousand at a time: taken as they are when none is missing
        texts = (values if isinstance(first, bytes) and not nulls else
                 [value.encode() if isinstance(value, str) else value or b"" for value in values])
        data = b"".join(texts)
        large = len(data) >= 1 << 31  # beyond 32-bit offsets: a large_string column
        offsets = array("q" if large else "i", accumulate(map(len, texts), initial=0))
        build = pa.LargeStringArray if large else pa.StringArray
        return build.from_buffers(count, pa.py_buffer(offsets), pa.py_buffer(data), validity)
    if pa.types.is_timestamp(kind):
        values = [None if value is None else (value - _EPOCH) // _MICROSECOND for value in values]
        code = "q"
    elif kind in (pa.int64(), pa.int32()):
        code = "q" if kind == pa.int64() else "i"
    else:
        raise TypeError(f"no Arrow column of {kind} is built here")
    if any(not isinstance(value, int) for value in values if value is not None):
        raise TypeError(f"values of a {kind} column must be ints")
    numbers = array(code, (0 if value is None else value for value in values))
    return pa.Array.from_buffers(kind, count, [validity, pa.py_buffer(numbers)])


def _validity(values: Sequence[Any]) -> bytearray:
    """Arrow's validity bitmap of `values`: bit i set when value i is not None."""
    bits = bytearray((len(values) + 7) // 8)
    for i, value in enumerate(values):
        if value is not None:
            bits[i >> 3] |= 1 << (i & 7)
    return bits
