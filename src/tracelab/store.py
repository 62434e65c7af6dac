"""Opening a store: a DuckDB file (read-write or read-only) or a Parquet folder (read-only).

Schema bootstrap and the mapping of DuckDB's open errors to `StoreError` live here, once.
"""
from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from tracelab.errors import Interrupted, StoreError, UsageError
from tracelab.sqlfiles import load_sql, run_script, sql_dir

if TYPE_CHECKING:
    import polars as pl

    from tracelab.ingest import FileReport, IngestReport, Input

SCHEMA_VERSION = "1"
DEFAULT_STORE = "tracelab.duckdb"
DEFAULT_MEMORY_LIMIT = "1GB"
"""DuckDB's memory limit (TRACELAB_MEMORY_LIMIT overrides it). Python and DuckDB's unmanaged
allocations come on top: at 1 GB, ingesting a 500 MB file peaks under 2 GB of RSS (BENCHMARKS.md)."""
TABLES = ("episodes", "steps", "tool_calls", "tool_definitions", "quarantine", "sources")
PARTITIONED = ("episodes", "steps", "tool_calls", "tool_definitions")
VIEWS = ("executed_writes", "transcript", "tool_availability")
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

    def ingest(self, paths: Sequence[str | os.PathLike[str] | Input], format: str = "auto", *,
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

    def export(self, folder: str | os.PathLike[str], *, overwrite: bool = False) -> dict[str, int]:
        """Write the store as a Parquet dataset (Hive-partitioned by `ep_bucket`); rows per table.

        Atomic: the dataset is written beside `folder` and put in its place at the end, so an
        export never mixes with an earlier one, and an interrupted export leaves the earlier one
        (or none). A `folder` that is not empty is replaced only with `overwrite`, and only when
        it holds nothing but an earlier export.

        Raises:
            UsageError: `folder` is not empty and `overwrite` is off, or holds other files.
            Interrupted: Ctrl-C (or SIGTERM); `folder` is as it was.
        """
        out = Path(folder)
        existing = _export_entries(out)
        if existing:
            if not overwrite:
                raise UsageError(f"{out} is not empty; export into a new or empty folder, or pass "
                                 "--overwrite to replace the export it holds")
            foreign = sorted(name for name in existing if name not in TABLES)
            if foreign:
                raise UsageError(f"{out} holds files that are not a tracelab export ({foreign[0]}); "
                                 "--overwrite only replaces an earlier export")
        out.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.export-", dir=out.parent))
        try:
            counts = self._write_parquet(staging)
            _swap_in(staging, out)
        except KeyboardInterrupt:
            raise Interrupted(f"interrupted: the export to {out} was not written; "
                              f"{'the earlier export is as it was' if existing else 'nothing was written'}") from None
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return counts

    def _write_parquet(self, out: Path) -> dict[str, int]:
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
                    f"TO '{_sql_path(target)}' (FORMAT parquet, PARTITION_BY (ep_bucket))"
                )
            else:
                Path(target).mkdir(exist_ok=True)
                self.con.execute(
                    f"COPY {table} TO '{_sql_path(target + '/data.parquet')}' (FORMAT parquet)"
                )
        return counts


def _export_entries(folder: Path) -> list[str]:
    """The names in `folder` (none when it does not exist)."""
    if not folder.exists():
        return []
    if not folder.is_dir():
        raise UsageError(f"{folder} is a file; export into a folder")
    return [entry.name for entry in folder.iterdir()]


def _swap_in(staging: Path, out: Path) -> None:
    """Put the written dataset at `out`: renames on one file system, the old export removed last."""
    old = None
    if out.exists():
        old = out.with_name(f".{out.name}.old-{os.getpid()}")
        os.rename(out, old)
    os.rename(staging, out)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _sql_path(path: str) -> str:
    # COPY takes no bound parameter for its target; a path is the only text we put in SQL,
    # and it is ours (the user's folder), quoted as a string literal.
    return path.replace("'", "''")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def open_store(path: str | os.PathLike[str] | None = None, *, read_only: bool = False,
               create: bool = True, wait: float = 0) -> Store:
    """Open (or create) a store.

    Args:
        path: a DuckDB file, or a folder holding a Parquet dataset (opened read-only).
            Defaults to `TRACELAB_STORE`, else ``./tracelab.duckdb``.
        read_only: open a DuckDB file without write access (other readers may share it).
        create: create the file when missing (otherwise a missing store is an error).
        wait: while another process holds the file's lock, keep trying for up to this many
            seconds before giving up (0: give up at once).

    Raises:
        StoreError: missing, locked (still, after `wait`), corrupt, or written by an unknown
            schema version.
    """
    target = Path(os.fspath(path) if path is not None else default_store_path())
    if target.is_dir():
        return _open_parquet(target)
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


def _open_parquet(folder: Path) -> Store:
    missing = [t for t in TABLES if not (folder / t).is_dir()]
    if missing:
        raise StoreError(f"{folder} is a folder but not a Parquet store (missing {', '.join(missing)}/)")
    import pyarrow.dataset as ds

    con = duckdb.connect(":memory:")
    try:
        _configure(con)
        for table in TABLES:
            partitioning = "hive" if table in PARTITIONED else None
            con.register(f"_pq_{table}", ds.dataset(folder / table, format="parquet",
                                                   partitioning=partitioning))
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
