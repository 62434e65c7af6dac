"""Opening a store: a DuckDB file (read-write or read-only) or a Parquet folder (read-only).

Schema bootstrap and the mapping of DuckDB's open errors to `StoreError` live here, once; the
tool-effect registry is `effects`. `Store.ingest` runs `tracelab.ingest` (the stage below).
May import: `tracelab.ingest`, `tracelab.formats` and the foundation modules.
"""
from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from tracelab.errors import Interrupted, StoreError, UsageError, first_line, interruptible, is_interrupt
from tracelab.sqlfiles import load_sql, path_literal, run_script, sql_dir

if TYPE_CHECKING:
    import polars as pl

    from tracelab.ingest.batches import FileReport, IngestReport
    from tracelab.ingest.inputs import Input
    from tracelab.store.effects import Effects

SCHEMA_VERSION = "1"
DEFAULT_STORE = "tracelab.duckdb"
DEFAULT_MEMORY_LIMIT = "1GB"
"""DuckDB's memory limit (TRACELAB_MEMORY_LIMIT overrides it). Python and DuckDB's unmanaged
allocations come on top: at 1 GB, ingesting a 500 MB file peaks under 2 GB of RSS (BENCHMARKS.md)."""
TABLES = ("episodes", "steps", "tool_calls", "tool_definitions", "quarantine", "sources", "tool_effects")
PARTITIONED = ("episodes", "steps", "tool_calls", "tool_definitions")
VIEWS = ("rules", "calls", "executed_writes", "transcript", "tool_availability")
"""In creation order: `rules` (the domain rules' macros) first, every view reads them;
`executed_writes` and `tool_availability` read `calls`."""
ADDED_TABLES = frozenset({"tool_effects", "check_cases", "check_failing_runs", "check_assertions", "check_reasons",
                          "check_selected", "check_exceptions", "check_carried", "check_renewed",
                          "check_summaries"})
"""Tables an earlier store or export may lack (sql/store/schema/<table>.sql): read as empty. A store
without check_selected kept check_results row by row, as a table: opened for writing, it becomes
the view of sql/store/schema/check_results.sql (`_upgrade`)."""
ADDED_COLUMNS = {
    "sources": {"file_size": "BIGINT", "file_mtime_ns": "BIGINT", "unread": "JSON"},
    "tool_calls": {"effect_source": "VARCHAR"},
    "tool_definitions": {"annotations": "JSON"},
    "check_results": {"step_idx": "INTEGER"},
    "check_runs": {"failed_cases": "VARCHAR[]", "runs": "BIGINT", "runs_failed": "BIGINT",
                   "tools": "STRUCT(pattern VARCHAR, effect VARCHAR, regex VARCHAR, is_glob BOOLEAN)[]"},
}
"""Columns added since schema version 1 was first written: an earlier store gains them
(`_upgrade`), an earlier export reads them as NULL."""
CHECK_TABLES = ("check_runs", "check_results", "check_cases", "check_failing_runs", "check_assertions", "check_reasons")
"""Saved checks and the rows `tracelab view` reads of them; a Parquet store has them once
`check --engine spark` saved one (tracelab.spark)."""
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
        self._files_locked = False

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection (idempotent)."""
        self.con.close()

    def ingest(self, paths: Sequence[str | os.PathLike[str] | Input], format: str = "auto", *,
               replace: bool = False,
               progress: Callable[[FileReport, int], None] | None = None, workers: int = 0,
               agent: str | None = None, model: str | None = None, tags: Sequence[str] = ()) -> IngestReport:
        """Load trace files, folders or globs into the store, each file wholly or not at all.

        Args:
            paths: files, folders (read recursively) and glob patterns.
            format: ``auto`` (detected per file) or a format name (`tracelab formats`).
            replace: read files again even when already ingested, and replace stored runs whose
                content differs, instead of quarantining them.
            progress: called after each file with its report and its size in bytes.
            workers: processes that parse a large input (0 or 1: a thread of this process); see
                `tracelab.ingest.pipeline.ingest_paths` for the caveat of worker processes.
            agent: set on the episodes added whose records name no agent (`ingest --agent`).
            model: set on the episodes added whose records name no model (`ingest --model`).
            tags: added to the tags of the episodes added (`ingest --tag`).

        Returns:
            The per-file reports, in input order (`added`, `count(status)`).

        Raises:
            StoreError: the store is read-only, damaged, or refused a write.
            Interrupted: Ctrl-C; the store holds exactly the files reported done.
        """
        from tracelab.ingest.pipeline import ingest_paths
        from tracelab.ingest.writer import EpisodeFill

        if self.read_only:
            kind = "a Parquet store" if self.parquet else "a store opened read-only"
            raise StoreError(f"{self.path}: {kind} is read-only; ingest into a DuckDB file store")
        try:
            # the store is verified before the first write, not up front: a re-run that finds
            # every file already ingested writes nothing and reads only `sources`
            return ingest_paths(self.con, paths, format=format, replace=replace, progress=progress,
                                workers=workers, before_write=self._verify,
                                fill=EpisodeFill(agent, model, tuple(tags)))
        except duckdb.Error as exc:
            if is_damage(exc):  # met while looking files up in `sources`
                raise damaged_store_error(exc, self.path) from None
            raise

    @property
    def effects(self) -> Effects:
        """The store's tool-effect registry (docs/trace-format.md §6): `list`, `set`, `unset`, `load`
        (a YAML/JSON file of `{tool or glob: read|write}`) and `unknown` (tools called with no
        known effect, most called first)."""
        from tracelab.store.effects import Effects

        return Effects(self)

    def sql(self, query: str, params: Sequence[Any] | dict[str, Any] | None = None) -> pl.DataFrame:
        """Run one query with bound parameters (``?`` or ``$name``); the result as a Polars DataFrame.

        On a read-only store (a Parquet folder, or a file opened read-only) only reading
        statements run (`READ_STATEMENTS`); anything else is refused before it runs. Nor does
        such a query touch any file or URL (`read_text`, `read_csv`, `glob`...): from the first
        query on, the store's connection has no file access, for good (DuckDB cannot give it
        back), so `export` a read-only store before querying it.

        Raises:
            UsageError: a SQL error (its first line), or a writing statement on a read-only store.
            StoreError: the store is damaged.
        """
        # Imported before the query runs: DuckDB imports them itself once the query has started,
        # and a Ctrl-C or SIGTERM that lands inside that import is lost (the query runs on).
        import polars  # noqa: F401
        import pyarrow  # noqa: F401

        try:
            if self.read_only:
                self._refuse_writes(query)
                self._lock_files()
            return _readable(self.con.sql(query, params=params)).pl()
        except duckdb.Error as exc:
            if is_damage(exc):
                raise damaged_store_error(exc, self.path) from None
            raise UsageError(f"SQL error: {first_line(exc)}") from None

    def _verify(self) -> None:
        """Read every block of every table once, so that a damaged store is refused before
        anything is written into it (DuckDB checks a block's checksum only when it reads it).

        Costs one scan of the store, which grows with what it holds.

        Raises:
            StoreError: a block is damaged or cannot be read.
        """
        try:
            for table in TABLES:
                columns = [row[0] for row in self.con.execute(
                    "SELECT column_name FROM duckdb_columns() WHERE table_name = ? AND NOT internal "
                    "AND database_name = current_database() AND schema_name = 'main'", [table]).fetchall()]
                hashed = ", ".join(f"max(hash({quote_identifier(c)}))" for c in columns)
                self.con.execute(f"SELECT {hashed} FROM {table}").fetchall()
        except duckdb.Error as exc:
            raise damaged_store_error(exc, self.path) from None

    def _lock_files(self) -> None:
        # Locked at the first query rather than at open: `export` writes files through the same
        # connection, and a read-only store may be exported.
        if not self._files_locked:
            # a caller may have locked the configuration with access already off (`tracelab sql`)
            if self.con.execute("SELECT current_setting('enable_external_access')").fetchall()[0][0]:
                self.con.execute("SET enable_external_access = false")
            self._files_locked = True

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
        except BaseException as exc:
            if not is_interrupt(exc):
                raise
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
                    f"TO {path_literal(target + '/ep_bucket=0/data_0.parquet')} (FORMAT parquet)"
                )
            elif table in PARTITIONED:
                self.con.execute(
                    f"COPY (SELECT *, (hash(episode_id) % 16)::INTEGER AS ep_bucket FROM {table}) "
                    f"TO {path_literal(target)} (FORMAT parquet, PARTITION_BY (ep_bucket))"
                )
            else:
                Path(target).mkdir(exist_ok=True)
                self.con.execute(
                    f"COPY {table} TO {path_literal(target + '/data.parquet')} (FORMAT parquet)"
                )
        return counts


def seal(store: Store) -> None:
    """From here on, no file access and no setting changed on `store` (read-only `tracelab sql`: a
    logging sink that writes files would abort DuckDB with external access off)."""
    store._lock_files()
    store.con.execute("SET lock_configuration = true")


def _readable(relation: duckdb.DuckDBPyRelation) -> duckdb.DuckDBPyRelation:
    """The relation with its VARIANT columns as text: Polars reads them as opaque bytes."""
    if not any(str(kind) == "VARIANT" for kind in relation.types):
        return relation
    return relation.project(", ".join(
        f"CAST({quote_identifier(name)} AS VARCHAR) AS {quote_identifier(name)}" if str(kind) == "VARIANT"
        else quote_identifier(name) for name, kind in zip(relation.columns, relation.types, strict=True)))


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


def quote_identifier(name: str) -> str:
    """`name` as a double-quoted SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


_DAMAGE_MARKS = ("Corrupt database file", "database has been invalidated")


def is_damage(exc: BaseException) -> bool:
    """True when a DuckDB error says the store itself is damaged or cannot be read or written."""
    return isinstance(exc, (duckdb.IOException, duckdb.FatalException)) or any(
        mark in str(exc) for mark in _DAMAGE_MARKS)


def damaged_store_error(exc: duckdb.Error, path: Path | None = None) -> StoreError:
    """The one-line StoreError (exit 3) for a DuckDB error met while reading or writing the store.

    Damage and I/O errors carry block locations and paths, and are shown. Any other message
    is withheld, since DuckDB quotes the values it could not convert and those are stored
    trace text; only its kind (e.g. ``Conversion Error``) is named.
    """
    store = f"{path}: " if path is not None else ""
    if is_damage(exc):
        return StoreError(f"{store}the store is damaged or unreadable ({first_line(exc)}); "
                          "restore it from a backup, or ingest the traces into a new store")
    kind = first_line(exc).split(":", 1)[0] if ":" in first_line(exc) else type(exc).__name__
    return StoreError(f"{store}reading the store failed with a DuckDB {kind} (its message is not shown: "
                      "it may quote stored trace text)")


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
    text = os.fspath(path) if path is not None else default_store_path()
    from tracelab.store import delta

    if delta.is_url(text) or (Path(text).is_dir() and delta.is_delta_store(text)):
        # a Delta store (tracelab.spark): each table at the version of the store's last commit
        return _open_parquet(Path(delta.delta_url(text)), buckets, delta.table_datasets(text))
    target = Path(text)
    if target.is_dir():
        return _open_parquet(target, buckets)
    if not target.exists() and (read_only or not create):
        raise StoreError(f"no store at {target}; run `tracelab ingest` first")
    con = _connect(target, read_only=read_only, wait=wait)
    try:
        if read_only:
            version, stale = _schema(con, target)
            if version == SCHEMA_VERSION and stale:  # written before a table or column existed
                con.close()
                _upgrade_in_place(target, wait)
                con = _connect(target, read_only=True, wait=wait)
                version, _ = _schema(con, target)
            configure_connection(con)
        else:
            configure_connection(con)
            version = _bootstrap(con, target)
        _check_version(version, target)
    except BaseException:
        con.close()
        raise
    return Store(target, con, read_only=read_only, parquet=False)


def _upgrade_in_place(target: Path, wait: float) -> None:
    """Upgrade an earlier store before opening it read-only.

    Opening read-write only when needed: the check itself runs on a read-only connection,
    so readers of a current store never take the writer's lock.
    """
    con = _connect(target, read_only=False, wait=wait)
    try:
        configure_connection(con)
        _bootstrap(con, target)
    finally:
        con.close()


def configure_connection(con: duckdb.DuckDBPyConnection) -> None:
    """The settings every connection tracelab evaluates on shares: UTC, a bounded memory."""
    # Timestamps without an offset are read as UTC, whatever the machine's zone.
    con.execute("SET TimeZone = 'UTC'")
    # DuckDB's own progress bar would write into a command's output (`tracelab sql`)
    try:
        con.execute("SET enable_progress_bar = false")
    except duckdb.Error:
        pass  # in Jupyter without ipywidgets DuckDB refuses to change it, and shows no bar
    # A bounded buffer pool: corpora larger than memory spill to disk instead of failing.
    limit = os.environ.get("TRACELAB_MEMORY_LIMIT", DEFAULT_MEMORY_LIMIT)
    try:
        if limit.strip().startswith("-"):  # DuckDB reads any negative size as "no limit"
            raise duckdb.InvalidInputException(limit)
        con.execute("SET memory_limit = ?", [limit])
    except duckdb.Error:
        raise UsageError(f"TRACELAB_MEMORY_LIMIT={limit!r} is not a memory size; write a positive number and a "
                         f"unit, e.g. 4GB or 512MB (default {DEFAULT_MEMORY_LIMIT})") from None


def _connect(target: Path, *, read_only: bool, wait: float) -> duckdb.DuckDBPyConnection:
    """Connect, retrying for up to `wait` seconds while another process holds the lock."""
    deadline = time.monotonic() + wait
    delay = 0.05
    while True:
        try:
            return interruptible(duckdb.connect(str(target), read_only=read_only))
        except duckdb.Error as exc:
            left = deadline - time.monotonic()
            if not _is_lock_error(exc) or left <= 0:
                raise _open_error(target, exc, waited=wait) from None
        time.sleep(min(delay, left))
        delay = min(delay * 2, 1.0)


def _is_lock_error(exc: duckdb.Error) -> bool:
    # the word, not the letters: a damaged file's message names the "block at location" it failed at
    return re.search(r"\block\b", str(exc), re.IGNORECASE) is not None


def _open_error(target: Path, exc: duckdb.Error, *, waited: float = 0) -> StoreError:
    text = str(exc)
    if _is_lock_error(exc):
        holder = re.search(r"PID (\d+)", text)
        who = f"process {holder.group(1)}" if holder else "another process"
        then = (f"still busy after waiting {waited:g} s; try again later" if waited
                else "wait for it to finish and try again")
        return StoreError(f"{target} is busy: it is locked by {who} (another tracelab or DuckDB session); {then}")
    if "Corrupt database file" in text:  # a DuckDB file with a damaged block (not some other file)
        return damaged_store_error(exc, target)
    return StoreError(f"{target} cannot be opened as a tracelab store: {first_line(exc)}")


def _bootstrap(con: duckdb.DuckDBPyConnection, target: Path) -> str:
    """Create the schema in a new store, in one transaction: a failure leaves nothing behind.
    Returns the store's schema version (that of an existing store, which an earlier tracelab
    may have written, else the one just created): the catalog is looked at once.

    A DuckDB file that already holds tables or views but is no tracelab store is refused
    untouched, rather than filled with tracelab's tables.
    """
    try:
        version, stale = _schema(con, target)
        if version is not None:
            if version == SCHEMA_VERSION and stale:
                _upgrade(con)
            return version
        foreign = con.execute(load_sql("store/schema/user_objects")).fetchall()
        if foreign:
            names = ", ".join(name for (name,) in foreign[:3]) + (", ..." if len(foreign) > 3 else "")
            raise StoreError(f"{target} is a DuckDB database that is not a tracelab store (it holds "
                             f"{names}); give --store a new file or an existing tracelab store")
        con.begin()
        try:
            con.execute(load_sql("store/schema/tables"))
            for table in ADDED_TABLES:
                run_script(con, f"store/schema/{table}")
            run_script(con, "store/schema/check_results")
            con.execute("INSERT OR IGNORE INTO tracelab_meta VALUES ('schema_version', ?)",
                        [SCHEMA_VERSION])
            _create_views(con)
            con.commit()
        except BaseException:
            con.rollback()
            raise
    except duckdb.Error as exc:
        raise StoreError(f"{target} cannot be initialised: {first_line(exc)}") from None
    return SCHEMA_VERSION


def _upgrade(con: duckdb.DuckDBPyConnection) -> None:
    """Add what an earlier store lacks (tool effects' tables and columns, docs/trace-format.md §6; the
    views' macros) and renew its views, in one transaction."""
    con.begin()
    try:
        tables = {name for (name,) in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() AND NOT temporary"
        ).fetchall()}
        for table in ADDED_TABLES:
            run_script(con, f"store/schema/{table}")
        for table, columns in ADDED_COLUMNS.items():
            for name, kind in columns.items():
                if table in tables or table in ADDED_TABLES:  # check_results: a table only in an earlier store
                    con.execute(f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS {name} {kind}")
        if "check_results" in tables:
            run_script(con, "store/views/rules")  # its macro is_plain_pass
            run_script(con, "store/schema/compact_results")
        run_script(con, "store/schema/check_results")
        run_script(con, "store/schema/upgrade")
        _create_views(con)
        con.commit()
    except BaseException:
        con.rollback()
        raise


def _create_views(con: duckdb.DuckDBPyConnection) -> None:
    for name in VIEWS:
        run_script(con, f"store/views/{name}")


def _schema(con: duckdb.DuckDBPyConnection, target: Path) -> tuple[str | None, bool]:
    """The store's schema version (None: no `tracelab_meta`), and whether it was written before a
    table or column of `ADDED_TABLES`/`ADDED_COLUMNS` or a macro of the views existed: one look
    at the catalog.

    Raises:
        StoreError: the catalog or the version cannot be read (`damaged_store_error`).
    """
    try:
        columns = set(con.execute(
            "SELECT table_name, column_name FROM duckdb_columns() WHERE table_oid IN "
            "(SELECT table_oid FROM duckdb_tables() WHERE database_name = current_database() AND NOT temporary)"
        ).fetchall())
        tables = {table for table, _ in columns}
        if "tracelab_meta" not in tables:
            return None, False
        rows = con.execute("SELECT value FROM tracelab_meta WHERE key = 'schema_version'").fetchall()
        macros = {name for (name,) in con.execute(
            "SELECT function_name FROM duckdb_functions() WHERE database_name = current_database() "
            "AND function_type IN ('macro', 'table_macro') AND NOT internal").fetchall()}
    except duckdb.Error as exc:  # its catalog damaged: what to do is said as for any damage met later
        raise damaged_store_error(exc, target) from None
    stale = bool(ADDED_TABLES - tables) or any(
        (table, name) not in columns for table, added in ADDED_COLUMNS.items() if table in tables for name in added
    ) or not store_macros() <= macros
    return (rows[0][0] if rows else None), stale


@cache
def store_macros() -> frozenset[str]:
    """The macros the views' SQL defines (sql/store/views/): a store without one of them was
    written by an earlier tracelab, and gets them with its views renewed (`_upgrade`)."""
    return frozenset(name for view in VIEWS for name in
                     re.findall(r"CREATE OR REPLACE MACRO (\w+)", load_sql(f"store/views/{view}")))


def _check_version(version: str | None, target: Path) -> None:
    if version is None:
        raise StoreError(f"{target} is a DuckDB file but not a tracelab store (no schema version)")
    if version != SCHEMA_VERSION:
        raise StoreError(
            f"{target} has schema version {version}; this tracelab reads version {SCHEMA_VERSION}. "
            "Re-ingest the traces into a new store with this version"
        )


def _open_parquet(folder: Path, buckets: Sequence[int] | None = None,
                  datasets: dict[str, Any] | None = None) -> Store:
    """A Parquet folder (one Hive-partitioned dataset per table), or the `datasets` of a Delta store."""
    present = set(datasets) if datasets is not None else {t for t in TABLES + CHECK_TABLES if (folder / t).is_dir()}
    missing = [t for t in TABLES if t not in ADDED_TABLES and t not in present]
    if missing:
        raise StoreError(f"{folder} is a folder but not a Parquet store (missing {', '.join(missing)}/)")
    import pyarrow.dataset as ds

    con = interruptible(duckdb.connect(":memory:"))
    try:
        configure_connection(con)
        saved = tuple(t for t in CHECK_TABLES if t in present)
        for table in TABLES + saved:
            if table not in present:  # an export made before the table existed
                run_script(con, f"store/schema/{table}")
                continue
            partitioning = "hive" if table in PARTITIONED else None
            dataset = (datasets[table] if datasets is not None
                       else ds.dataset(folder / table, format="parquet", partitioning=partitioning))
            scanned: Any = dataset
            if buckets is not None and table in PARTITIONED:
                import pyarrow.compute as pc

                # a Spark task evaluates some partitions of the runs (tracelab.spark)
                scanned = dataset.filter(pc.field("ep_bucket").isin(list(buckets)))
            con.register(f"_pq_{table}", scanned)
            added = "".join(f", NULL::{kind} AS {name}" for name, kind in ADDED_COLUMNS.get(table, {}).items()
                            if name not in dataset.schema.names)
            con.execute(f"CREATE VIEW {table} AS SELECT *{added} FROM _pq_{table}")
        con.execute("CREATE TABLE tracelab_meta (key VARCHAR, value VARCHAR)")
        con.execute("INSERT INTO tracelab_meta VALUES ('schema_version', ?)", [SCHEMA_VERSION])
        _create_views(con)
        # The data is read through Arrow: SQL run on this store needs no file access at all, and
        # gets none from its first query on (`Store.sql`, `seal`); until then `export` may
        # write the store elsewhere (docs/cli.md §1: a Parquet store stays exportable).
    except (duckdb.Error, OSError, ValueError) as exc:
        con.close()
        raise StoreError(f"{folder} cannot be read as a Parquet store: {first_line(exc)}") from None
    return Store(folder, con, read_only=True, parquet=True)


__all__ = ["Store", "open_store", "default_store_path", "seal", "SCHEMA_VERSION", "sql_dir"]
