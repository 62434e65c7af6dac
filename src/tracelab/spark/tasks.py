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

from tracelab.spark.layout import FLAT, PARTITIONED

if TYPE_CHECKING:
    import pyarrow as pa

    from tracelab.suite.model import Suite

VERDICT_COLUMNS = ("case_id", "assertion_id", "assertion_type", "episode_id", "passed", "exercised", "reason")


@dataclasses.dataclass
class ChunkOutput:
    """One ingested chunk, staged: the library's file reports and the part files written."""

    chunk: int
    files: list[dict[str, Any]]
    """`tracelab.ingest.FileReport` fields, one per file, in path order."""
    parts: list[str]
    """Staged Parquet files, relative to the staging folder (`<table>/[ep_bucket=K/]name`)."""
    replaced: list[str]
    """Seeded episode ids that `--replace` replaced (only when seeds were given)."""


def ingest_chunk(chunk: int, files: Sequence[str], fmt: str, replace: bool, staging: str, buckets: int,
                 known_sources: dict[str, dict[str, Any]],
                 seed_episodes: Sequence[tuple[str, str]] = ()) -> ChunkOutput:
    """Ingest `files` (contiguous in path order) with the library into a task-local DuckDB store
    and stage its rows as Parquet parts under `staging`.

    Args:
        known_sources: `sources` rows of the Parquet store, by content hash; those matching a file
            of the chunk are seeded, so the library reports the file as already ingested.
        seed_episodes: (episode_id, content_hash) of stored episodes these files collide with; the
            library then decides skip, conflict or replace exactly as in one DuckDB store.
    """
    from tracelab.formats.base import Source
    from tracelab.store import open_store

    with tempfile.TemporaryDirectory(prefix="tracelab-chunk-") as tmp, \
            open_store(Path(tmp) / "chunk.duckdb") as local:
        con = local.con
        seeds = [row for path in files if (row := known_sources.get(Source(path).content_hash))]
        # seeded rows have no ingested_at: they mark what was there before and are never staged
        for row in seeds:
            con.execute("INSERT INTO sources VALUES (?, ?, ?, ?, ?, NULL)",
                        [row["source_uri"], row["content_hash"], row["format"], row["episodes"],
                         row["quarantined"]])
        if seed_episodes:
            con.executemany("INSERT INTO episodes (episode_id, content_hash, tools_declared, n_steps) "
                            "VALUES (?, ?, false, 0)", [list(s) for s in seed_episodes])
        report = local.ingest(list(files), fmt, replace=replace)
        replaced: list[str] = []
        if seed_episodes:
            still = {r[0] for r in con.execute(
                "SELECT episode_id FROM episodes WHERE ingested_at IS NULL").fetchall()}
            replaced = sorted({eid for eid, _ in seed_episodes} - still)
        parts = _stage(con, Path(staging), chunk, buckets)
    return ChunkOutput(chunk, [dataclasses.asdict(f) for f in report.files], parts, replaced)


def _stage(con: Any, staging: Path, chunk: int, buckets: int) -> list[str]:
    """COPY the chunk's new rows into Parquet parts; the part names say which chunk wrote them."""
    # unique in the store: the wave's staging folder is a fresh random name
    name = f"{staging.name}-c{chunk:06d}"
    for table in PARTITIONED:
        count = con.execute(f"SELECT count(*) FROM {table} WHERE episode_id IN "
                            "(SELECT episode_id FROM episodes WHERE ingested_at IS NOT NULL)").fetchall()[0][0]
        if not count:
            continue
        # the same bucket function as Store.export, with the store's bucket count
        con.execute(
            f"COPY (SELECT *, (hash(episode_id) % {int(buckets)})::INTEGER AS ep_bucket FROM {table} "
            "WHERE episode_id IN (SELECT episode_id FROM episodes WHERE ingested_at IS NOT NULL)) "
            f"TO '{_literal(staging / table)}' (FORMAT parquet, PARTITION_BY (ep_bucket), "
            f"FILENAME_PATTERN '{name}_{{i}}', OVERWRITE_OR_IGNORE true)")
    for table in FLAT:
        count = con.execute(f"SELECT count(*) FROM {table} WHERE ingested_at IS NOT NULL").fetchall()[0][0]
        if not count:
            continue
        (staging / table).mkdir(parents=True, exist_ok=True)
        con.execute(f"COPY (SELECT * FROM {table} WHERE ingested_at IS NOT NULL) "
                    f"TO '{_literal(staging / table / (name + '.parquet'))}' (FORMAT parquet)")
    return sorted(p.relative_to(staging).as_posix() for p in staging.rglob(f"{name}*.parquet"))


def _literal(path: Path) -> str:
    # COPY takes no bound parameter for its target; the path is ours (the store's staging folder)
    return str(path).replace("'", "''")


def evaluate_bucket(store: str, buckets: Sequence[int], suite: Suite, cases: list[str] | None,
                    categories: list[str] | None, strict: bool) -> pa.Table:
    """The verdict rows of some `ep_bucket` partitions of the runs, as the DuckDB engine computes them."""
    from tracelab.store import open_store
    from tracelab.suite.evaluate import evaluate

    with open_store(store, buckets=list(buckets)) as opened:
        result = evaluate(opened.con, suite, cases=cases, categories=categories, strict=strict)
    return result.verdicts.select(VERDICT_COLUMNS).to_arrow().cast(verdict_schema())


def verdict_schema() -> pa.Schema:
    """The Arrow schema of verdict rows as Spark exchanges them (plain 32-bit offsets)."""
    import pyarrow as pa

    return pa.schema([(c, pa.bool_() if c == "passed" else pa.string()) for c in VERDICT_COLUMNS])


def evaluate_buckets(batches: Iterable[pa.RecordBatch], store: str, buckets: int, tasks: int, suite: Suite,
                     cases: list[str] | None, categories: list[str] | None, strict: bool
                     ) -> Iterable[pa.RecordBatch]:
    """`mapInArrow` body: each input row is a task number t < `tasks`; yields the verdict rows of
    the buckets b with b % tasks == t, evaluated together."""
    for batch in batches:
        for task in batch.column(0).to_pylist():
            mine = [b for b in range(buckets) if b % tasks == int(task)]
            yield from evaluate_bucket(store, mine, suite, cases, categories, strict).to_batches()


def ingest_chunks(batches: Iterable[pa.RecordBatch], fmt: str, replace: bool, staging: str, buckets: int,
                  known_sources: dict[str, dict[str, Any]]) -> Iterable[pa.RecordBatch]:
    """`mapInArrow` body: each input row is (chunk, files as JSON); yields (chunk, output as JSON)."""
    import json

    import pyarrow as pa

    for batch in batches:
        for chunk, files in zip(batch.column(0).to_pylist(), batch.column(1).to_pylist(), strict=True):
            out = ingest_chunk(int(chunk), json.loads(files), fmt, replace, staging, buckets, known_sources)
            yield pa.RecordBatch.from_pydict(
                {"chunk": [int(chunk)], "output": [json.dumps(dataclasses.asdict(out), default=_jsonable)]},
                schema=pa.schema([("chunk", pa.int64()), ("output", pa.string())]))


def _jsonable(value: object) -> object:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(type(value).__name__)


__all__ = ["ChunkOutput", "evaluate_bucket", "evaluate_buckets", "ingest_chunk", "ingest_chunks",
           "verdict_schema"]
