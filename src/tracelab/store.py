"""Opening a store: a DuckDB file (read-write or read-only) or a Parquet folder (read-only).

Schema bootstrap and the mapping of DuckDB's open errors to `StoreError` live here, once.
"""
from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from tracelab.errors import StoreError, UsageError
from tracelab.sqlfiles import load_sql, run_script, sql_dir

if TYPE_CHECKING:
    import polars as pl

    from tracelab.ingest import FileReport, IngestReport

SCHEMA_VERSION = "1"
DEFAULT_STORE = "tracelab.duckdb"
DEFAULT_MEMORY_LIMIT = "1GB"
"""DuckDB's memory limit (TRACELAB_MEMORY_LIMIT overrides it). Python and DuckDB's unmanaged
allocations come on top: at 1 GB, ingesting a 500 MB file peaks under 2 GB of RSS (BENCHMARKS.md)."""
TABLES = ("episodes", "steps", "tool_calls", "tool_definitions", "quarantine", "sources")
PARTITIONED = ("episodes", "steps", "tool_calls", "tool_definitions")
VIEWS = ("executed_writes", "transcript", "tool_availability")
CHECK_TABLES = ("check_runs", "check_results")
"""Saved checks; a Parquet store has them when `check --engine spark` saved one (tracelab.spark)."""
READ_STATEMENTS = frozenset({"SELECT", "EXPLAIN", "PRAGMA", "CALL", "SET"})
"""Statement types a read-only store runs (DESCRIBE, SHOW and SUMMARIZE are SELECTs)."""


def default_store_path() -> str:
    """`TRACELAB_STORE`, else ``./tracelab.duckdb``."""
    return os.environ.get("TRACELAB_STORE") or DEFAULT_STORE


class Store:
    """An open store. Use `open_store` to get one; close it (or use ``with``) when done."""

    def __init__(self, path: Path, con: duckdb.DuckDBPyConnection, *, read_only: bool,
                 parquet: bool) -> None:
        self.path = path
        self.con = con
        self.read_only = read_only
        self.parquet = parquet

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection (idempotent)."""
        self.con.close()

    def ingest(self, paths: Sequence[str | os.PathLike[str]], format: str = "auto", *,
               replace: bool = False,
               progress: Callable[[FileReport, int], None] | None = None) -> IngestReport:
        """Load trace files, folders or globs (see `tracelab.ingest.ingest_paths`)."""
        from tracelab.ingest import ingest_paths

        if self.read_only:
            kind = "a Parquet store" if self.parquet else "a store opened read-only"
            raise StoreError(f"{self.path}: {kind} is read-only; ingest into a DuckDB file store")
        return ingest_paths(self.con, paths, format=format, replace=replace, progress=progress)

    def sql(self, query: str, params: Sequence[Any] | dict[str, Any] | None = None) -> pl.DataFrame:
        """Run one query with bound parameters; the result as a Polars DataFrame.

        On a read-only store (a Parquet folder, or a file opened read-only) only reading
        statements run (`READ_STATEMENTS`); anything else is refused before it runs.
        """
        try:
            if self.read_only:
                self._refuse_writes(query)
            return self.con.sql(query, params=params).pl()
        except duckdb.Error as exc:
            raise UsageError(f"SQL error: {_first_line(exc)}") from None

    def _refuse_writes(self, query: str) -> None:
        # A Parquet store's connection is an in-memory database that would accept CREATE
        # and INSERT; refusing by statement type keeps both kinds of read-only store alike.
        for statement in self.con.extract_statements(query):
            kind = statement.type.name
            if kind not in READ_STATEMENTS:
                fix = ("a Parquet store is read-only" if self.parquet
                       else "the store is open read-only (`tracelab sql --write` allows writes)")
                raise UsageError(f"{kind} statements are refused: {fix}")

    def export(self, folder: str | os.PathLike[str]) -> dict[str, int]:
        """Write the store as a Parquet dataset (Hive-partitioned by `ep_bucket`); rows per table."""
        out = Path(folder)
        out.mkdir(parents=True, exist_ok=True)
        counts: dict[str, int] = {}
        for table in TABLES:
            target = str(out / table)
            counts[table] = self.con.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0]
            if table in PARTITIONED and counts[table] == 0:
                # no rows, no partitions: still write the schema, so readers see the columns
                (out / table / "ep_bucket=0").mkdir(parents=True, exist_ok=True)
                self.con.execute(
                    f"COPY (SELECT * FROM {table} LIMIT 0) "
                    f"TO '{_sql_path(target + '/ep_bucket=0/data_0.parquet')}' (FORMAT parquet)"
                )
            elif table in PARTITIONED:
                self.con.execute(
                    f"COPY (SELECT *, (hash(episode_id) % 16)::INTEGER AS ep_bucket FROM {table}) "
                    f"TO '{_sql_path(target)}' (FORMAT parquet, PARTITION_BY (ep_bucket), "
                    "OVERWRITE_OR_IGNORE true)"
                )
            else:
                Path(target).mkdir(exist_ok=True)
                self.con.execute(
                    f"COPY {table} TO '{_sql_path(target + '/data.parquet')}' (FORMAT parquet)"
                )
        return counts


def _sql_path(path: str) -> str:
    # COPY takes no bound parameter for its target; a path is the only text we put in SQL,
    # and it is ours (the user's folder), quoted as a string literal.
    return path.replace("'", "''")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def open_store(path: str | os.PathLike[str] | None = None, *, read_only: bool = False,
               create: bool = True, wait: float = 0, buckets: Sequence[int] | None = None) -> Store:
    """Open (or create) a store.

    Args:
        path: a DuckDB file, or a folder holding a Parquet dataset (opened read-only).
            Defaults to `TRACELAB_STORE`, else ``./tracelab.duckdb``.
        read_only: open a DuckDB file without write access (other readers may share it).
        create: create the file when missing (otherwise a missing store is an error).
        wait: while another process holds the file's lock, keep trying for up to this many
            seconds before giving up (0: give up at once).
        buckets: a Parquet store only: read only these `ep_bucket` partitions of the episode
            tables (a Spark task evaluates one partition of the runs; tracelab.spark).

    Raises:
        StoreError: missing, locked (still, after `wait`), corrupt, or written by an unknown
            schema version.
    """
    target = Path(os.fspath(path) if path is not None else default_store_path())
    if target.is_dir():
        return _open_parquet(target, buckets)
    if not target.exists() and (read_only or not create):
        raise StoreError(f"no store at {target}; run `tracelab ingest` first")
    con = _connect(target, read_only=read_only, wait=wait)
    try:
        _configure(con)
        if not read_only:
            _bootstrap(con, target)
        _check_version(con, target)
    except BaseException:
        con.close()
        raise
    return Store(target, con, read_only=read_only, parquet=False)


def _configure(con: duckdb.DuckDBPyConnection) -> None:
    # Timestamps without an offset are read as UTC, whatever the machine's zone.
    con.execute("SET TimeZone = 'UTC'")
    # A bounded buffer pool: corpora larger than memory spill to disk instead of failing.
    con.execute("SET memory_limit = ?", [os.environ.get("TRACELAB_MEMORY_LIMIT", DEFAULT_MEMORY_LIMIT)])


def _connect(target: Path, *, read_only: bool, wait: float) -> duckdb.DuckDBPyConnection:
    """Connect, retrying for up to `wait` seconds while another process holds the lock."""
    deadline = time.monotonic() + wait
    delay = 0.05
    while True:
        try:
            return duckdb.connect(str(target), read_only=read_only)
        except duckdb.Error as exc:
            left = deadline - time.monotonic()
            if not _is_lock_error(exc) or left <= 0:
                raise _open_error(target, exc, waited=wait) from None
        time.sleep(min(delay, left))
        delay = min(delay * 2, 1.0)


def _is_lock_error(exc: duckdb.Error) -> bool:
    return "lock" in str(exc).lower()


def _open_error(target: Path, exc: duckdb.Error, *, waited: float = 0) -> StoreError:
    text = str(exc)
    if _is_lock_error(exc):
        holder = re.search(r"PID (\d+)", text)
        who = f"process {holder.group(1)}" if holder else "another process"
        then = (f"still busy after waiting {waited:g} s; try again later" if waited
                else "wait for it to finish and try again")
        return StoreError(f"{target} is busy: it is locked by {who} (another tracelab or DuckDB session); {then}")
    return StoreError(f"{target} cannot be opened as a tracelab store: {_first_line(exc)}")


def _bootstrap(con: duckdb.DuckDBPyConnection, target: Path) -> None:
    try:
        version = _stored_version(con)
        if version is None:
            con.execute(load_sql("schema/tables"))
            con.execute("INSERT OR IGNORE INTO tracelab_meta VALUES ('schema_version', ?)",
                        [SCHEMA_VERSION])
            _create_views(con)
    except duckdb.Error as exc:
        raise StoreError(f"{target} cannot be initialised: {_first_line(exc)}") from None


def _create_views(con: duckdb.DuckDBPyConnection) -> None:
    for name in VIEWS:
        run_script(con, f"views/{name}")


def _stored_version(con: duckdb.DuckDBPyConnection) -> str | None:
    exists = con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'tracelab_meta' AND NOT temporary"
    ).fetchall()[0][0]
    if not exists:
        return None
    rows = con.execute("SELECT value FROM tracelab_meta WHERE key = 'schema_version'").fetchall()
    return rows[0][0] if rows else None


def _check_version(con: duckdb.DuckDBPyConnection, target: Path) -> None:
    try:
        version = _stored_version(con)
    except duckdb.Error as exc:
        raise StoreError(f"{target} cannot be read: {_first_line(exc)}") from None
    if version is None:
        raise StoreError(f"{target} is a DuckDB file but not a tracelab store (no schema version)")
    if version != SCHEMA_VERSION:
        raise StoreError(
            f"{target} has schema version {version}; this tracelab reads version {SCHEMA_VERSION}. "
            "Re-ingest the traces into a new store with this version"
        )


def _open_parquet(folder: Path, buckets: Sequence[int] | None = None) -> Store:
    missing = [t for t in TABLES if not (folder / t).is_dir()]
    if missing:
        raise StoreError(f"{folder} is a folder but not a Parquet store (missing {', '.join(missing)}/)")
    import pyarrow.dataset as ds

    con = duckdb.connect(":memory:")
    try:
        _configure(con)
        saved = tuple(t for t in CHECK_TABLES if (folder / t).is_dir())
        for table in TABLES + saved:
            partitioning = "hive" if table in PARTITIONED else None
            data = ds.dataset(folder / table, format="parquet", partitioning=partitioning)
            if buckets is not None and table in PARTITIONED:
                import pyarrow.compute as pc

                data = data.filter(pc.field("ep_bucket").isin(list(buckets)))
            con.register(f"_pq_{table}", data)
            con.execute(f"CREATE VIEW {table} AS SELECT * FROM _pq_{table}")
        con.execute("CREATE TABLE tracelab_meta (key VARCHAR, value VARCHAR)")
        con.execute("INSERT INTO tracelab_meta VALUES ('schema_version', ?)", [SCHEMA_VERSION])
        _create_views(con)
        # The data is read through Arrow: SQL run on this store needs no file access at all.
        con.execute("SET enable_external_access = false")
    except (duckdb.Error, OSError, ValueError) as exc:
        con.close()
        raise StoreError(f"{folder} cannot be read as a Parquet store: {_first_line(exc)}") from None
    return Store(folder, con, read_only=True, parquet=True)


__all__ = ["Store", "open_store", "default_store_path", "SCHEMA_VERSION", "sql_dir"]
