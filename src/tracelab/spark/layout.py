"""The store `--engine spark` writes: Delta Lake tables (delta-rs), on a path or an object store.

Layout (`tracelab.store.delta`): one Delta table per store table, `episodes/`, `steps/`,
`tool_calls/`, `tool_definitions/` partitioned by `ep_bucket` = ``hash(episode_id) % buckets``
(DuckDB's hash, as `export` writes), `quarantine/`, `sources/`, `tool_effects/`, and once a check
saved one `check_runs/`, `check_results/`; plus the head table `_tracelab/`, whose description
records the bucket count and whose one row names the version of every table.

Commits. Tasks write Parquet files straight into the tables' folders under fresh names; a file is
part of a table only once the driver commits an `add` action for it. A store commit is one Delta
transaction per changed table, then one commit of the head replacing its row of versions:
readers read the versions the head names, so a run killed before its head commit leaves the
previous store whole. `recover`, run before every write, restores any table a killed run
committed past the head; the files it wrote and never committed are ignored (`vacuum` removes
them; the chunk files an ingest stages in each table's `_staging/` go with the next ingest).
Re-running the ingest then completes it (docs/trace-format.md §6).

File sizes. An ingest's tasks stage each chunk's rows apart, then rewrite each bucket's new rows,
with the bucket's committed files smaller than the target, into files of the target size
(`TARGET_FILE_SIZE`, `--target-file-size`): the commit adds those and removes the small ones.
"""
from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tracelab.errors import StoreError, UsageError, first_line
from tracelab.store.delta import HEAD, LAYOUT, VERSIONS_COLUMN, delta_url, is_delta_store, is_url, read_head

LOCK = "_tracelab.lock"
DEFAULT_BUCKETS = 16
"""What `tracelab export` writes (store.Store.export); a Spark store may have more."""
TARGET_FILE_SIZE = 128 << 20
"""Bytes per data file a Spark ingest or check writes, by default (`--target-file-size`)."""
PARTITIONED = ("episodes", "steps", "tool_calls", "tool_definitions")
FLAT = ("quarantine", "sources")


@dataclass(frozen=True)
class Layout:
    """An existing (or just created) Delta store, its bucket count and its tables' committed versions."""

    url: str
    """An absolute local path, or an object-store URL (``s3://bucket/prefix``)."""
    buckets: int
    versions: dict[str, int]

    @property
    def root(self) -> str:
        return self.url

    def table(self, name: str) -> str:
        return f"{self.url}/{name}"


def local_path(url: str | os.PathLike[str]) -> str:
    """The store's location as delta-rs names it (an absolute path, or the object-store URL).

    Raises:
        UsageError: a URL of a scheme a store cannot live under.
    """
    from tracelab.spark.paths import local_path as parsed

    text = os.fspath(url)
    if is_url(text):
        return delta_url(text)
    path = None if "://" in text and not text.lower().startswith("file://") else parsed(text, what="store")
    if path is None:
        raise UsageError(f"{text}: --engine spark keeps its store on a path, a file:// URL or an object store "
                         "delta-rs writes (s3://, gs://, az://, abfss://)")
    # absolute: the tasks write into the store from processes whose working folder is not ours
    return os.path.abspath(path)


def open_layout(root: str | os.PathLike[str], *, create: bool, buckets: int | None = None) -> Layout:
    """The store's layout; with `create`, make an empty store. A folder written by `export` is
    adopted (its table folders become Delta tables in place, their files unchanged).

    Raises:
        StoreError: not a store (and not creating), or an unreadable head.
        UsageError: `buckets` differs from the count the store records.
    """
    url = delta_url(root)
    local = not is_url(url)
    if local and os.path.isfile(url):
        raise StoreError(f"{url} is a file; --engine spark works on a Delta store folder or URL")
    if is_delta_store(url):
        head = read_head(url)
        if buckets is not None and buckets != head.buckets:
            raise UsageError(f"--buckets {buckets}: the store at {url} has {head.buckets} ep_bucket "
                             "partitions; a store keeps its count (ingest into a new store)")
        return Layout(url, head.buckets, head.versions)
    if local and all(os.path.isdir(os.path.join(url, t)) for t in PARTITIONED + FLAT):
        # a folder written by `tracelab export`: 16 buckets, as export writes
        if buckets is not None and buckets != DEFAULT_BUCKETS:
            raise UsageError(f"--buckets {buckets}: {url} was written by `tracelab export` with "
                             f"{DEFAULT_BUCKETS} ep_bucket partitions")
        # adopted in place: each table folder gains a Delta log naming the files it holds
        return _adopt(url)
    if not create:
        if local and os.path.exists(url):
            raise StoreError(f"{url} is a folder but not a tracelab store (no {HEAD}/ Delta table)")
        raise StoreError(f"no store at {url}; run `tracelab ingest --engine spark --store {url}` first")
    if local and os.path.isdir(url) and any(n != LOCK for n in os.listdir(url)):
        raise StoreError(f"{url} is a folder that is not a tracelab store; name an empty or new folder")
    return _create_empty(url, buckets or DEFAULT_BUCKETS)


def _create_empty(url: str, buckets: int) -> Layout:
    """A Delta table per table of an empty store (the schemas `export` writes), then the head."""
    import pyarrow.dataset as ds
    from deltalake import DeltaTable

    from tracelab.store import open_store

    versions: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="tracelab-empty-") as tmp, \
            open_store(Path(tmp) / "empty.duckdb") as empty:
        empty.export(Path(tmp) / "out")
        for folder in sorted((Path(tmp) / "out").iterdir()):
            partitioned = folder.name in PARTITIONED
            schema = ds.dataset(folder, format="parquet", partitioning="hive" if partitioned else None).schema
            table = DeltaTable.create(f"{url}/{folder.name}", schema, mode="ignore",
                                      partition_by=["ep_bucket"] if partitioned else None)
            versions[folder.name] = table.version()
    return _create_head(url, buckets, versions)


def _adopt(url: str) -> Layout:
    """Make each table folder of a Parquet export a Delta table in place, then the head."""
    from deltalake import DeltaTable, convert_to_deltalake

    versions: dict[str, int] = {}
    for name in sorted(os.listdir(url)):
        folder = os.path.join(url, name)
        if name.startswith(("_", ".")) or not os.path.isdir(folder):
            continue
        if not DeltaTable.is_deltatable(folder):
            partitioned = name in PARTITIONED
            # the export's partition folders are Hive-style; DuckDB's bucket column is an INTEGER
            convert_to_deltalake(folder, partition_by=_bucket_schema() if partitioned else None,
                                 partition_strategy="hive" if partitioned else None)
        versions[name] = DeltaTable(folder).version()
    return _create_head(url, DEFAULT_BUCKETS, versions)


def _bucket_schema() -> Any:
    from deltalake.schema import Field, PrimitiveType, Schema

    return Schema([Field("ep_bucket", PrimitiveType("integer"))])


def _create_head(url: str, buckets: int, versions: dict[str, int]) -> Layout:
    import pyarrow as pa
    from deltalake import DeltaTable

    description = json.dumps({"layout": LAYOUT, "ep_buckets": buckets})
    DeltaTable.create(f"{url}/{HEAD}", pa.schema([(VERSIONS_COLUMN, pa.string())]), mode="ignore",
                      description=description)
    return _publish(Layout(url, buckets, {}), versions)


@dataclass
class Change:
    """What one table gains and loses in a store commit: Parquet files already in its folder."""

    adds: list[dict[str, Any]]
    """{"path": relative to the table, "size": bytes, "bucket": int or None, "rows": int}."""
    removes: list[str]
    """Paths relative to the table of committed files that leave it."""


def commit(layout: Layout, changes: dict[str, Change], *, tables: dict[str, Any] | None = None,
           schemas: dict[str, Any] | None = None, operation: str = "ingest") -> Layout:
    """One Delta transaction per changed table, then the head commit that publishes them all.

    `changes`: files already in the tables' folders, added or removed; `tables`: Arrow tables (the
    driver's own few rows: a saved check's run and its view rows) appended. A table the head does
    not name yet is created first (a killed run's leftover replaced), of `schemas[name]` for a
    changed table, else of its data's schema.

    Returns the layout at the new versions."""
    from deltalake import CommitProperties, DeltaTable, write_deltalake
    from deltalake.transaction import AddAction, RemoveAction

    versions = dict(layout.versions)
    now = int(time.time() * 1000)
    properties = CommitProperties(custom_metadata={"tracelab.operation": operation})
    for name, change in sorted(changes.items()):
        if name not in versions and name in (schemas or {}):  # also without rows: readers expect the table
            write_deltalake(layout.table(name), (schemas or {})[name].empty_table(), mode="overwrite",
                            schema_mode="overwrite")
            versions[name] = DeltaTable(layout.table(name)).version()
        if not change.adds and not change.removes:
            continue
        table = DeltaTable(layout.table(name))
        partition = table.metadata().partition_columns
        actions: list[Any] = [
            AddAction(a["path"], int(a["size"]),
                      {"ep_bucket": str(a["bucket"])} if partition else {}, now, True,
                      json.dumps({"numRecords": int(a["rows"])}))
            for a in change.adds]
        actions += [RemoveAction(path, True, now) for path in change.removes]
        table.create_write_transaction(actions, "append", table.schema(), partition_by=partition or None,
                                       commit_properties=properties)
        table.update_incremental()  # the object still names the version it read
        versions[name] = table.version()
    for name, data in sorted((tables or {}).items()):
        fresh = name not in versions
        write_deltalake(layout.table(name), data, mode="overwrite" if fresh else "append",
                        schema_mode="overwrite" if fresh else "merge", commit_properties=properties)
        versions[name] = DeltaTable(layout.table(name)).version()
    return _publish(layout, versions)


def _publish(layout: Layout, versions: dict[str, int]) -> Layout:
    """The head commit: its one row replaced by the new versions (a store commit is visible from here on)."""
    import pyarrow as pa
    from deltalake import write_deltalake

    write_deltalake(layout.table(HEAD), pa.table({VERSIONS_COLUMN: [json.dumps(versions, sort_keys=True)]}),
                    mode="overwrite")
    return Layout(layout.url, layout.buckets, versions)


def recover(layout: Layout) -> int:
    """Restore every table a killed run committed past the head's version; how many were restored."""
    from deltalake import DeltaTable

    restored = 0
    for name, version in sorted(layout.versions.items()):
        table = DeltaTable(layout.table(name))
        if table.version() > version:
            try:
                table.restore(version)
            except Exception as exc:  # noqa: BLE001 - delta-rs raises its own errors
                raise StoreError(f"{layout.table(name)}: an interrupted commit cannot be undone "
                                 f"({first_line(exc)})") from None
            restored += 1
    return restored


@contextmanager
def writer_lock(layout: Layout, wait: float = 0) -> Iterator[None]:
    """Hold the store's writer lock (an exclusive `flock` on `_tracelab.lock`) while writing a local
    store: two ingests committing into one store at once could both store a file, as two writers of
    one DuckDB file could; the second waits up to `wait` seconds, then is refused, as for a busy
    DuckDB store (`ingest --wait`). An object-store URL has no lock: run one writer at a time.

    Raises:
        StoreError: another ingest holds it (still, after `wait`).
    """
    import fcntl

    if is_url(layout.url):
        yield
        return
    deadline = time.monotonic() + wait
    with open(os.path.join(layout.url, LOCK), "a+b") as handle:
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    then = f"still busy after waiting {wait:g} s" if wait else "wait for it to finish and"
                    raise StoreError(f"{layout.url} is busy: another `tracelab ingest --engine spark` is "
                                     f"writing it; {then} try again") from None
                time.sleep(0.2)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def reopen(layout: Layout) -> Layout:
    """The layout at the store's current head (after another writer, or `recover`)."""
    head = read_head(layout.url)
    return Layout(layout.url, head.buckets, head.versions)


__all__ = ["DEFAULT_BUCKETS", "FLAT", "PARTITIONED", "TARGET_FILE_SIZE", "Change", "Layout", "commit", "local_path",
           "open_layout", "recover", "reopen", "writer_lock"]
