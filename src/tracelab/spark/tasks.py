"""What runs inside a Spark task: the same library, on one chunk of files or one partition of runs.

Nothing here imports pyspark: the driver (`tracelab.spark.engine`) ships these functions to the
executors, and the tests call them directly as well.
"""
from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tracelab.results.saved import RESULT_COLUMNS
from tracelab.spark.layout import FLAT, PARTITIONED
from tracelab.spark.paths import fetch, is_remote
from tracelab.sqlfiles import path_literal

if TYPE_CHECKING:
    import pyarrow as pa

    from tracelab.ingest.batches import FileReport
    from tracelab.ingest.inputs import Input
    from tracelab.suite.model import Suite

VERDICT_COLUMNS = RESULT_COLUMNS
"""A verdict row as the DuckDB engine makes it, `step_idx` included (docs/cli.md §6)."""
SOURCE_COLUMNS = ("source_uri", "content_hash", "format", "episodes", "quarantined", "file_size", "file_mtime_ns")
"""The `sources` columns a task is seeded with (`ingested_at` stays NULL: seeded rows are never staged)."""


@dataclasses.dataclass
class ChunkOutput:
    """One ingested chunk, staged: the library's file reports and the part files written."""

    chunk: int
    files: list[dict[str, Any]]
    """`tracelab.ingest.pipeline.FileReport` fields, one per file, in path order."""
    parts: list[dict[str, Any]]
    """Parquet files written into the store's table folders, not yet committed:
    {"table", "path" (relative to the table), "size", "bucket" (or None), "rows"}."""
    replaced: list[str]
    """Seeded episode ids that `--replace` replaced (only when seeds were given)."""
    episodes: list[str] = dataclasses.field(default_factory=list)
    """The ids of the episodes written (the driver checks them against the store's)."""
    sources: list[list[str]] = dataclasses.field(default_factory=list)
    """(source_uri, content_hash) of the `sources` rows written."""


def ingest_chunk(chunk: int, files: Sequence[Sequence[str | None]], fmt: str, replace: bool, store: str, name: str,
                 buckets: int,
                 known_sources: pa.Table | None,
                 seed_episodes: Sequence[tuple[str, str]] = ()) -> ChunkOutput:
    """Ingest `files` (contiguous in path order) with the library into a task-local DuckDB store
    and write its new rows as Parquet files into the tables of the Delta store at `store` (named
    after `name`, fresh per wave, and the chunk), uncommitted: the driver commits them.

    Args:
        files: (path, why it is skipped or None) as `tracelab.ingest.pipeline.Input` says it, the path local
            or a URL of a file system `tracelab.spark.paths` reads (copied to the task's temporary
            folder first, and recorded under its URL).
        known_sources: the store's `sources` rows (`SOURCE_COLUMNS`): seeded, so that the
            library recognises a file already ingested exactly as in one DuckDB store.
        seed_episodes: (episode_id, content_hash) of stored episodes these files collide with; the
            library then decides skip, conflict or replace exactly as in one DuckDB store.
    """
    from tracelab.bulk_insert import insert_arrow
    from tracelab.store import open_store

    with tempfile.TemporaryDirectory(prefix="tracelab-chunk-") as tmp, \
            open_store(Path(tmp) / "chunk.duckdb") as local:
        con = local.con
        # seeded rows have no ingested_at: they mark what was there before and are never staged
        if known_sources is not None and known_sources.num_rows:
            insert_arrow(con, "sources", known_sources.select(list(SOURCE_COLUMNS)))
        if seed_episodes:
            con.executemany("INSERT INTO episodes (episode_id, content_hash, tools_declared, n_steps) "
                            "VALUES (?, ?, false, 0)", [list(s) for s in seed_episodes])
        local_files, urls, unread = _local_copies(files, Path(tmp) / "remote")
        # parsed in this process (no worker processes): Spark already runs a task per core
        report = local.ingest(local_files, fmt, replace=replace)
        if urls:
            _record_urls(con, report, urls)
        for no, failed in unread:  # in input order, as the library reports a file it cannot read
            report.files.insert(no, failed)
        replaced: list[str] = []
        if seed_episodes:
            still = {r[0] for r in con.execute(
                "SELECT episode_id FROM episodes WHERE ingested_at IS NULL").fetchall()}
            replaced = sorted({eid for eid, _ in seed_episodes} - still)
        parts = _stage(con, Path(tmp) / "staged", store, f"{name}-c{chunk:06d}", buckets)
        episodes = [r[0] for r in con.execute(
            "SELECT episode_id FROM episodes WHERE ingested_at IS NOT NULL").fetchall()]
        sources = [[r[0], r[1]] for r in con.execute(
            "SELECT source_uri, content_hash FROM sources WHERE ingested_at IS NOT NULL").fetchall()]
    return ChunkOutput(chunk, [dataclasses.asdict(f) for f in report.files], parts, replaced, episodes, sources)


def _local_copies(files: Sequence[Sequence[str | None]], folder: Path
                  ) -> tuple[list[Input], dict[str, str], list[tuple[int, FileReport]]]:
    """The files as local paths: a URL's object is copied under `folder` (its name kept, since a
    format may claim a file by its name). Also the URL of each copy, and the reports of the
    objects that could not be copied (status failed), with their input positions."""
    from tracelab.errors import UsageError
    from tracelab.ingest.batches import FileReport
    from tracelab.ingest.inputs import Input

    local: list[Input] = []
    urls: dict[str, str] = {}
    unread: list[tuple[int, FileReport]] = []
    for no, (name, skip) in enumerate(files):
        assert name is not None
        if not is_remote(name):
            local.append(Input(name, skip))
            continue
        target = folder / str(no) / name.rstrip("/").rsplit("/", 1)[-1]
        target.parent.mkdir(parents=True)
        try:
            fetch(name, target)
        except (OSError, UsageError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            unread.append((no, FileReport(name, status="failed", message=f"{name}: cannot be read ({first})")))
            continue
        local.append(Input(str(target)))
        urls[str(target)] = name
    return local, urls, unread


def _record_urls(con: Any, report: Any, urls: dict[str, str]) -> None:
    """Rows and reports of copied files under their URL; no size and time (a copy's own would
    never match the object's: such a file is recognised by its content hash)."""
    import pyarrow as pa

    con.register("_tl_urls", pa.table({"copy": list(urls), "url": list(urls.values())}))
    try:
        for table in ("episodes", "quarantine"):
            con.execute(f"UPDATE {table} t SET source_uri = u.url FROM _tl_urls u WHERE t.source_uri = u.copy")
        con.execute("UPDATE sources t SET source_uri = u.url, file_size = NULL, file_mtime_ns = NULL "
                    "FROM _tl_urls u WHERE t.source_uri = u.copy")
    finally:
        con.unregister("_tl_urls")
    for file in report.files:
        copy = file.path
        if copy in urls:
            file.path = urls[copy]
            if file.message:
                file.message = file.message.replace(copy, file.path)


def _stage(con: Any, staging: Path, store: str, name: str, buckets: int) -> list[dict[str, Any]]:
    """COPY the chunk's new rows into Parquet files, then put them into the store's table folders."""
    import pyarrow.parquet as pq

    from tracelab.spark.paths import put_file, store_filesystem

    staging.mkdir(parents=True, exist_ok=True)
    for table in PARTITIONED:
        count = con.execute(f"SELECT count(*) FROM {table} WHERE episode_id IN "
                            "(SELECT episode_id FROM episodes WHERE ingested_at IS NOT NULL)").fetchall()[0][0]
        if not count:
            continue
        # the same bucket function as Store.export, with the store's bucket count
        con.execute(
            f"COPY (SELECT *{_plain_json(con, table)}, (hash(episode_id) % {int(buckets)})::INTEGER AS ep_bucket "
            f"FROM {table} "
            "WHERE episode_id IN (SELECT episode_id FROM episodes WHERE ingested_at IS NOT NULL)) "
            f"TO {path_literal(staging / table)} (FORMAT parquet, PARTITION_BY (ep_bucket), "
            f"FILENAME_PATTERN '{name}_{{i}}', OVERWRITE_OR_IGNORE true)")
    for table in FLAT:
        count = con.execute(f"SELECT count(*) FROM {table} WHERE ingested_at IS NOT NULL").fetchall()[0][0]
        if not count:
            continue
        (staging / table).mkdir(parents=True, exist_ok=True)
        con.execute(f"COPY (SELECT *{_plain_json(con, table)} FROM {table} WHERE ingested_at IS NOT NULL) "
                    f"TO {path_literal(staging / table / (name + '.parquet'))} (FORMAT parquet)")
    fs, base = store_filesystem(store)
    parts = []
    for file in sorted(staging.rglob("*.parquet")):
        relative = file.relative_to(staging)
        table, inside = relative.parts[0], "/".join(relative.parts[1:])
        bucket = int(relative.parts[1].split("=", 1)[1]) if table in PARTITIONED else None
        put_file(file, fs, f"{base}/{table}/{inside}")
        parts.append({"table": table, "path": inside, "size": file.stat().st_size, "bucket": bucket,
                      "rows": pq.ParquetFile(file).metadata.num_rows})
    return parts


def _plain_json(con: Any, table: str) -> str:
    """`` REPLACE (c::VARCHAR AS c, ...)`` for the JSON columns of `table`: written as plain UTF-8
    strings, the type Delta readers expect (Polars reads Parquet's JSON type as binary); every
    reader of the store, DuckDB's through Arrow included, sees them as strings either way."""
    columns = [r[0] for r in con.execute(
        "SELECT column_name FROM duckdb_columns() WHERE table_name = ? AND data_type = 'JSON'", [table]).fetchall()]
    if not columns:
        return ""
    return " REPLACE (" + ", ".join(f'"{c}"::VARCHAR AS "{c}"' for c in columns) + ")"


def evaluate_bucket(store: str, buckets: Sequence[int], suite: Suite, cases: list[str] | None,
                    categories: list[str] | None, strict: bool, since: datetime | None = None) -> pa.Table:
    """The verdict rows of some `ep_bucket` partitions of the runs, as the DuckDB engine computes them
    (with `since`: of the runs ingested after it, as `check --since` evaluates)."""
    from tracelab.engine.evaluate import evaluate
    from tracelab.store import open_store

    with open_store(store, buckets=list(buckets)) as opened:
        result = evaluate(opened.con, suite, cases=cases, categories=categories, strict=strict, since=since)
    return result.verdicts.select(VERDICT_COLUMNS).to_arrow().cast(verdict_schema())


def verdict_schema() -> pa.Schema:
    """The Arrow schema of verdict rows as Spark exchanges them (plain 32-bit offsets)."""
    import pyarrow as pa

    kinds = {"passed": pa.bool_(), "step_idx": pa.int32()}
    return pa.schema([(c, kinds.get(c, pa.string())) for c in VERDICT_COLUMNS])


def evaluate_buckets(batches: Iterable[pa.RecordBatch], store: str, buckets: int, tasks: int, suite: Suite,
                     cases: list[str] | None, categories: list[str] | None, strict: bool,
                     since: datetime | None, out: str) -> Iterable[pa.RecordBatch]:
    """`mapInArrow` body: each input row is a task number t < `tasks`; evaluates the buckets b with
    b % tasks == t together and writes their verdict rows to a Parquet file under `out` (a folder
    under the store); yields (task, rows). The rows travel to the driver through the store's
    file system, not through Spark: a million runs make millions of rows, more than a driver JVM holds."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from tracelab.spark.paths import put_file, store_filesystem

    for batch in batches:
        for task in batch.column(0).to_pylist():
            mine = [b for b in range(buckets) if b % tasks == int(task)]
            table = evaluate_bucket(store, mine, suite, cases, categories, strict, since)
            # whole or not at all: a retried task rewrites the same rows under the same name
            with tempfile.TemporaryDirectory(prefix="tracelab-verdicts-") as tmp:
                local = Path(tmp) / "verdicts.parquet"
                pq.write_table(table, local)
                fs, base = store_filesystem(out)
                put_file(local, fs, f"{base}/task-{int(task):05d}.parquet")
            yield pa.RecordBatch.from_pydict({"task": [int(task)], "rows": [table.num_rows]},
                                             schema=task_schema())


def task_schema() -> pa.Schema:
    """What a check task returns to the driver: its number and how many verdict rows it wrote."""
    import pyarrow as pa

    return pa.schema([("task", pa.int64()), ("rows", pa.int64())])


def ingest_chunks(batches: Iterable[pa.RecordBatch], files: dict[int, list[tuple[str, str | None]]], fmt: str,
                  replace: bool, store: str, name: str, buckets: int, known_sources: pa.Table | None
                  ) -> Iterable[pa.RecordBatch]:
    """`mapInArrow` body: each input row is a chunk number (a key of `files`); yields (chunk, its
    `ChunkOutput` as JSON)."""
    import json

    import pyarrow as pa

    for batch in batches:
        for chunk in batch.column(0).to_pylist():
            out = ingest_chunk(int(chunk), files[int(chunk)], fmt, replace, store, name, buckets, known_sources)
            yield pa.RecordBatch.from_pydict(
                {"chunk": [int(chunk)], "output": [json.dumps(dataclasses.asdict(out), default=_jsonable)]},
                schema=pa.schema([("chunk", pa.int64()), ("output", pa.string())]))


def _jsonable(value: object) -> object:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(type(value).__name__)


__all__ = ["SOURCE_COLUMNS", "VERDICT_COLUMNS", "ChunkOutput", "evaluate_bucket", "evaluate_buckets",
           "ingest_chunk", "ingest_chunks", "task_schema", "verdict_schema"]
