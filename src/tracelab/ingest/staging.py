"""Staging outside the store's transaction: a second connection and an in-memory database for
batches' steps, staged ahead in the reading thread (see `tracelab.ingest.pipeline`)."""
from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

import duckdb

from tracelab.errors import interruptible
from tracelab.ingest.batches import Batch, Unit
from tracelab.sqlfiles import run_script


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cycle collector off while files load.

    Parsed records are trees (no cycles), freed by reference counting; but a batch keeps
    millions of them alive, and every collection walks them all: with the collector on, a
    100k-episode file took a fifth longer to load.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@contextmanager
def staging_connection(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """A second connection to the store for staging batches (see the module docstring)."""
    scratch = _staging_cursor(con)
    try:
        yield scratch
    finally:
        scratch.close()


def _staging_cursor(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """A connection of its own to the store's database, with the staging macros."""
    cursor = interruptible(con.cursor())
    # it reads timestamps without an offset as the store's connection does
    zone = con.execute("SELECT current_setting('TimeZone')").fetchall()[0][0]
    cursor.execute("SET TimeZone = ?", [zone])
    run_script(cursor, "ingest/macros")
    return cursor


STAGING_DB = "_tracelab_staging"


@contextmanager
def staging_database(con: duckdb.DuckDBPyConnection) -> Iterator[str]:
    """An in-memory database for the ingest's staged steps, seen by every connection to the store.

    The connection that stages a batch's steps commits at once and the store's transaction never
    touches this database: a batch's steps are freed as soon as the writer drops them, not at
    commit (see the module docstring).
    """
    taken = {row[0] for row in con.execute("SELECT database_name FROM duckdb_databases()").fetchall()}
    name = next(f"{STAGING_DB}{n or ''}" for n in range(len(taken) + 1) if f"{STAGING_DB}{n or ''}" not in taken)
    con.execute(f"ATTACH ':memory:' AS {name}")
    try:
        yield name
    finally:
        try:
            con.execute(f"DETACH {name}")
        except duckdb.Error:
            pass  # an interrupted ingest: the database goes with the connection


class Stager:
    """Stages batches' steps (sql/ingest/stage_steps.sql), each into a schema of its own in the
    staging database (`staging_database`), on a connection of its own: one for the reading thread,
    which stages each batch ahead, one for the writer, for a batch that was not."""

    def __init__(self, con: duckdb.DuckDBPyConnection, database: str, prefix: str) -> None:
        self.con = con
        self.database = database
        self.prefix = prefix
        self.count = 0
        self._cursor: duckdb.DuckDBPyConnection | None = None
        self.home = ""

    @property
    def cursor(self) -> duckdb.DuckDBPyConnection:
        """Its connection, made on first use: an ingest that stages nothing (every file already
        ingested) pays for none."""
        if self._cursor is None:
            self._cursor = _staging_cursor(self.con)
            home = self._cursor.execute("SELECT current_database(), current_schema()").fetchall()[0]
            self.home = ".".join('"' + part.replace('"', '""') + '"' for part in home)
        return self._cursor

    def stage(self, batch: Batch) -> None:
        """Stage the batch's steps; `batch.steps_schema` then names where they are."""
        self.count += 1
        schema = f"{self.database}.{self.prefix}{self.count}"
        cursor = self.cursor
        cursor.execute(f"CREATE SCHEMA {schema}")
        batch.steps_schema = schema
        cursor.execute(f"USE {schema}")  # stage_steps.sql creates its table in the current schema
        cursor.register("stage_raw", batch.table)
        try:
            run_script(cursor, "ingest/stage_steps")
        finally:
            cursor.unregister("stage_raw")
            cursor.execute(f"USE {self.home}")

    def stage_ahead(self, batch: Batch) -> None:
        """`stage`, leaving the batch to the writer's own staging if that fails (out of memory):
        the writer then meets the error itself, and reports it as it would have."""
        try:
            self.stage(batch)
        except duckdb.InterruptException:
            raise
        except duckdb.Error:
            drop_staged(self.cursor, batch)

    def close(self) -> None:
        if self._cursor is not None:
            self._cursor.close()


def drop_staged(con: duckdb.DuckDBPyConnection, batch: Batch) -> None:
    """Free the batch's staged steps (its schema in the staging database), if any."""
    schema, batch.steps_schema = batch.steps_schema, None
    if schema is not None:
        try:
            con.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        except duckdb.Error:
            pass  # interrupted: the whole database goes at the end of the ingest


def staged_ahead(units: Iterator[Unit], stager: Stager) -> Iterator[Unit]:
    """The units, each batch's steps staged (in the reading thread, see the module docstring)."""
    for unit in units:
        if isinstance(unit, Batch) and unit.table is not None and unit.table.num_rows:
            stager.stage_ahead(unit)
        yield unit
