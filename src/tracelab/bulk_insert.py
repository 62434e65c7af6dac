"""Appending rows to a store table through Arrow, for ingest and for saving a check's results."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import duckdb


def insert_arrow(con: duckdb.DuckDBPyConnection, table: str, columns: Any) -> None:
    """Append rows to `table` through Arrow (DuckDB's executemany is slow).

    `columns` is a dict of equal-length lists, or anything Arrow can read as a table
    (a Polars DataFrame); its column names say which columns of `table` are filled.
    """
    import pyarrow as pa

    batch = pa.table(columns)
    con.register("_tl_insert", batch)
    con.execute(f"INSERT INTO {table} ({', '.join(batch.column_names)}) SELECT * FROM _tl_insert")
    con.unregister("_tl_insert")
