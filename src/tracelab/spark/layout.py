"""The Parquet store that `--engine spark` writes: the layout of `tracelab export`, plus a journal.

Layout (docs/cli.md §1, the Parquet store): `episodes/`, `steps/`, `tool_calls/`, `tool_definitions/`
Hive-partitioned by `ep_bucket` = ``hash(episode_id) % buckets`` (DuckDB's hash), `quarantine/`
and `sources/`, and, once a check saved one, `check_runs/` and `check_results/`. `_tracelab.json`
records the number of buckets (16, as `export` writes, unless the store was created with more).

Commits. Ingest output is staged under `_txn/<id>/` (a name every reader skips: pyarrow ignores
paths starting with `_`). A commit writes `_txn/<id>.commit`, the list of renames and deletes that
publish it, atomically (write, fsync, rename); then it applies them. `recover` runs before every
Spark ingest: a journal present is applied again (each step is idempotent), a staging folder
without one is deleted. So a kill leaves every trace file wholly in the store or not at all once
the next ingest starts, and a re-run completes the work (docs/trace-format.md §6).
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tracelab.errors import StoreError, UsageError

META = "_tracelab.json"
LOCK = "_tracelab.lock"
JOURNAL = "_txn"
DEFAULT_BUCKETS = 16
"""What `tracelab export` writes (store.Store.export); a Spark store may have more."""
PARTITIONED = ("episodes", "steps", "tool_calls", "tool_definitions")
FLAT = ("quarantine", "sources")


@dataclass(frozen=True)
class Layout:
    """An existing (or just created) Parquet store folder and its bucket count."""

    root: Path
    buckets: int

    def staging(self) -> Path:
        """A fresh staging folder for one commit, inside the store (renames stay on one file system)."""
        path = self.root / JOURNAL / uuid.uuid4().hex[:16]
        path.mkdir(parents=True)
        return path


def local_path(url: str | os.PathLike[str]) -> Path:
    """The store folder of a path or ``file://`` URL (`tracelab.spark.paths`), made absolute.

    Raises:
        UsageError: a URL of an object store or HDFS: a store's commits rename files, which those
            cannot do atomically; the store goes on a file system every node mounts.
    """
    from tracelab.spark.paths import local_path as parsed

    path = parsed(url, what="store")
    if path is None:
        raise UsageError(f"{os.fspath(url)}: the store of --engine spark is a folder on a file system every "
                         "node mounts (a path or file:// URL); trace files may be read from object storage")
    # absolute: the tasks write into the store from processes whose working folder is not ours
    return Path(os.path.abspath(path))


def open_layout(root: Path, *, create: bool, buckets: int | None = None) -> Layout:
    """The store's layout; with `create`, make an empty store (or adopt an `export`ed one).

    Raises:
        StoreError: not a Parquet store (and not creating), or an unreadable `_tracelab.json`.
        UsageError: `buckets` differs from the count the store records.
    """
    if root.is_file():
        raise StoreError(f"{root} is a file; --engine spark works on a Parquet store folder "
                         "(`tracelab export DIR` writes one from a DuckDB store)")
    meta = root / META
    if meta.is_file():
        try:
            recorded = int(json.loads(meta.read_text())["ep_buckets"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise StoreError(f"{meta}: unreadable store metadata ({exc}); restore it or re-ingest") from None
        if buckets is not None and buckets != recorded:
            raise UsageError(f"--buckets {buckets}: the store at {root} has {recorded} ep_bucket "
                             "partitions; a store keeps its count (ingest into a new folder)")
        return Layout(root, recorded)
    tables_present = all((root / t).is_dir() for t in PARTITIONED + FLAT)
    if tables_present:
        # a folder written by `tracelab export`: 16 buckets, as export writes
        if buckets is not None and buckets != DEFAULT_BUCKETS:
            raise UsageError(f"--buckets {buckets}: {root} was written by `tracelab export` with "
                             f"{DEFAULT_BUCKETS} ep_bucket partitions")
        layout = Layout(root, DEFAULT_BUCKETS)
        if create:
            _write_meta(layout)
        return layout
    if not create:
        if root.exists():
            raise StoreError(f"{root} is a folder but not a Parquet store (no {', '.join(PARTITIONED)}/)")
        raise StoreError(f"no store at {root}; run `tracelab ingest --engine spark --store {root}` first")
    if root.exists() and any(p for p in root.iterdir() if p.name not in (JOURNAL, LOCK)):
        raise StoreError(f"{root} is a folder that is not a tracelab store; name an empty or new folder")
    layout = Layout(root, buckets or DEFAULT_BUCKETS)
    _create_empty(layout)
    return layout


def _create_empty(layout: Layout) -> None:
    """The table folders with an empty Parquet file each, so that readers see every column."""
    from tracelab.store import open_store

    layout.root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="tracelab-empty-") as tmp, \
            open_store(Path(tmp) / "empty.duckdb") as empty:
        empty.export(Path(tmp) / "out")
        # every folder `export` writes, so the store opens like an exported one
        for folder in sorted((Path(tmp) / "out").iterdir()):
            target = layout.root / folder.name
            if folder.is_dir() and not target.exists():
                shutil.copytree(folder, target)
    _write_meta(layout)


def _write_meta(layout: Layout) -> None:
    text = json.dumps({"layout": "tracelab.parquet/v1", "ep_buckets": layout.buckets}) + "\n"
    atomic_write(layout.root / META, text.encode())


def atomic_write(path: Path, data: bytes) -> None:
    """Write `path` whole or not at all (a temporary name, fsync, rename)."""
    tmp = path.with_name(f"_{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def commit(layout: Layout, staging: Path, renames: list[tuple[Path, Path]], deletes: list[Path]) -> None:
    """Publish a staged commit: journal it, then apply it (see the module docstring)."""
    journal = staging.with_name(staging.name + ".commit")
    ops = {"renames": [[str(a), str(b)] for a, b in renames], "deletes": [str(p) for p in deletes]}
    atomic_write(journal, json.dumps(ops).encode())
    _apply(journal, staging)


def _apply(journal: Path, staging: Path) -> None:
    ops = json.loads(journal.read_text())
    for src, dst in ops["renames"]:
        if Path(src).exists():
            if Path(dst).exists():
                # part names are unique per commit: a clash would silently drop stored rows
                raise StoreError(f"{dst} already exists; the commit {journal.name} is not applied")
            Path(dst).parent.mkdir(parents=True, exist_ok=True)
            os.replace(src, dst)
    for path in ops["deletes"]:
        Path(path).unlink(missing_ok=True)
    shutil.rmtree(staging, ignore_errors=True)
    journal.unlink(missing_ok=True)


@contextmanager
def writer_lock(layout: Layout, wait: float = 0) -> Iterator[None]:
    """Hold the store's writer lock (an exclusive `flock` on `_tracelab.lock`) while ingesting:
    two ingests committing into one store at once could both store a file, as two writers of one
    DuckDB file could; the second waits up to `wait` seconds, then is refused, as for a busy
    DuckDB store (`ingest --wait`).

    Raises:
        StoreError: another ingest holds it (still, after `wait`).
    """
    import fcntl
    import time

    deadline = time.monotonic() + wait
    with open(layout.root / LOCK, "a+b") as handle:
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    then = f"still busy after waiting {wait:g} s" if wait else "wait for it to finish and"
                    raise StoreError(f"{layout.root} is busy: another `tracelab ingest --engine spark` is "
                                     f"writing it; {then} try again") from None
                time.sleep(0.2)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def recover(layout: Layout) -> int:
    """Finish the commits a kill interrupted and drop uncommitted staging; how many were finished."""
    base = layout.root / JOURNAL
    if not base.is_dir():
        return 0
    finished = 0
    for journal in sorted(base.glob("*.commit")):
        try:
            _apply(journal, journal.with_suffix(""))
        except (OSError, ValueError, KeyError) as exc:
            raise StoreError(f"{journal}: an interrupted commit cannot be completed ({exc})") from None
        finished += 1
    for leftover in base.iterdir():
        if leftover.is_dir():
            shutil.rmtree(leftover, ignore_errors=True)
        elif leftover.suffix != ".commit":
            leftover.unlink(missing_ok=True)
    return finished


__all__ = ["DEFAULT_BUCKETS", "Layout", "atomic_write", "commit", "local_path", "open_layout", "recover",
           "writer_lock"]
