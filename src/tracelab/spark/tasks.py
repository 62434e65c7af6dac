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
STAGING = "_staging"
"""The folder inside each table where ingest tasks stage their chunk files (`_staging/<ingest>/`): never
committed; the ingest compacts them into files of the target size (`compact_group`) and removes it."""
ROW_GROUP_ROWS = 122_880
"""Rows per Parquet row group in the files written here (DuckDB's own row group size)."""
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
    """The ids of the episodes written, only for a chunk ingested with seeds (on the driver): the
    driver finds the collisions of the others with a distributed join (`find_collisions`)."""
    sources: list[list[str]] = dataclasses.field(default_factory=list)
    """(source_uri, content_hash) of the `sources` rows written."""


def ingest_chunk(chunk: int, files: Sequence[Sequence[str | None]], fmt: str, replace: bool, store: str, name: str,
                 buckets: int,
                 known_sources: pa.Table | None,
                 seed_episodes: Sequence[tuple[str, str]] = ()) -> ChunkOutput:
    """Ingest `files` (contiguous in path order) with the library into a task-local DuckDB store
    and write its new rows as Parquet files into the tables of the Delta store at `store`, in each
    table's `STAGING/<name>/` folder (`name` is the ingest's; the files are named after the chunk),
    never committed: the driver compacts them into the tables' files (`compact_group`).

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
        parts = _stage(con, Path(tmp) / "staged", store, f"{STAGING}/{name}", f"{name}-c{chunk:06d}", buckets)
        episodes = [r[0] for r in con.execute(
            "SELECT episode_id FROM episodes WHERE ingested_at IS NOT NULL").fetchall()] if seed_episodes else []
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


def _stage(con: Any, staging: Path, store: str, folder: str, name: str, buckets: int) -> list[dict[str, Any]]:
    """COPY the chunk's new rows into Parquet files, then put them into `folder` of the store's
    table folders; their paths relative to the table."""
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
        put_file(file, fs, f"{base}/{table}/{folder}/{inside}")
        parts.append({"table": table, "path": f"{folder}/{inside}", "size": file.stat().st_size, "bucket": bucket,
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


def write_sized(batches: Iterable[pa.RecordBatch], target: int, fs: Any, folder: str, stem: str
                ) -> list[dict[str, Any]]:
    """Write `batches` as Parquet files of about `target` bytes each into `folder` of `fs` (named
    ``<stem>-<n>.parquet``, each put whole); a file is closed once it reaches `target`, so only the
    last is smaller. {"name", "size", "rows"} of each file, in order (none without rows)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from tracelab.spark.paths import put_file

    written: list[dict[str, Any]] = []
    pending: list[pa.RecordBatch] = []
    state: dict[str, Any] = {"writer": None, "handle": None, "rows": 0, "schema": None}

    with tempfile.TemporaryDirectory(prefix="tracelab-files-") as tmp:
        local = Path(tmp) / "part.parquet"

        def close() -> None:
            if state["writer"] is None:
                return
            state["writer"].close()
            state["handle"].close()
            name = f"{stem}-{len(written):03d}.parquet"
            put_file(local, fs, f"{folder}/{name}")
            written.append({"name": name, "size": local.stat().st_size, "rows": state["rows"]})
            state.update(writer=None, handle=None, rows=0)

        def flush() -> None:
            if not pending:
                return
            table = pa.Table.from_batches(pending)
            pending.clear()
            if state["writer"] is None:
                state["handle"] = open(local, "wb")  # noqa: SIM115 - closed in close()
                state["writer"] = pq.ParquetWriter(state["handle"], state["schema"])
            state["writer"].write_table(table, row_group_size=ROW_GROUP_ROWS)
            state["rows"] += table.num_rows
            if state["handle"].tell() >= target:
                close()

        size = 0
        for batch in batches:
            if not batch.num_rows:
                continue
            if state["schema"] is None:
                state["schema"] = batch.schema
            elif batch.schema != state["schema"]:
                batch = batch.cast(state["schema"])
            pending.append(batch)
            size += batch.nbytes
            if sum(b.num_rows for b in pending) >= ROW_GROUP_ROWS or size >= target // 4:
                flush()
                size = 0
        flush()
        close()
    return written


def read_batches(fs: Any, base: str, paths: Sequence[str], columns: Sequence[str] | None = None
                 ) -> Iterable[pa.RecordBatch]:
    """The record batches of Parquet files (paths relative to `base` in `fs`), in order."""
    import pyarrow.parquet as pq

    for path in paths:
        with fs.open_input_file(f"{base}/{path}") as handle:
            yield from pq.ParquetFile(handle).iter_batches(batch_size=16_384, columns=columns)


def find_collisions(batches: Iterable[pa.RecordBatch], store: str,
                    groups: dict[int, tuple[list[str], list[tuple[str, int]]]]) -> Iterable[pa.RecordBatch]:
    """`mapInArrow` body of the ingest's distributed join: each input row is an `ep_bucket` b, a key
    of `groups` = (the bucket's committed episodes files, its staged ones with their chunk);
    yields the (episode_id, content_hash, origin) rows of every episode id found more than once
    (origin -1: the store; else the chunk). A run's bucket is a hash of its id, so two files can
    share an id only within a bucket: the join is one task per bucket, with no shuffle."""
    import duckdb

    from tracelab.spark.paths import store_filesystem

    fs, base = store_filesystem(f"{store}/episodes")
    schema = collision_schema()
    for batch in batches:
        for bucket in batch.column(0).to_pylist():
            stored, staged = groups[int(bucket)]
            pieces = [(path, -1) for path in stored] + list(staged)
            found = _ids(fs, base, pieces)
            with duckdb.connect() as con:
                con.register("ids", found)
                rows = con.sql("SELECT episode_id, content_hash, origin FROM ids WHERE episode_id IN "
                               "(SELECT episode_id FROM ids GROUP BY episode_id HAVING count(*) > 1) "
                               "ORDER BY episode_id, origin").to_arrow_table()
            yield from rows.cast(schema).to_batches()


def _ids(fs: Any, base: str, pieces: list[tuple[str, int]]) -> pa.Table:
    """(episode_id, content_hash, origin) of every episode of `pieces` = (file, origin)."""
    import pyarrow as pa

    columns = ["episode_id", "content_hash"]
    tables = []
    for path, origin in pieces:
        for batch in read_batches(fs, base, [path], columns):
            tables.append(pa.table({"episode_id": batch.column("episode_id").cast(pa.string()),
                                    "content_hash": batch.column("content_hash").cast(pa.string()),
                                    "origin": pa.array([origin] * batch.num_rows, pa.int64())}))
    return pa.concat_tables(tables) if tables else collision_schema().empty_table()


def collision_schema() -> pa.Schema:
    import pyarrow as pa

    return pa.schema([("episode_id", pa.string()), ("content_hash", pa.string()), ("origin", pa.int64())])


def compact_groups(batches: Iterable[pa.RecordBatch], store: str, groups: list[list[dict[str, Any]]], target: int,
                   name: str) -> Iterable[pa.RecordBatch]:
    """`mapInArrow` body: each input row is a group number; a group is a list of (table, bucket)
    pieces {"table", "bucket" (or None), "inputs": paths relative to the table, in order}; each
    piece's rows are written into files of about `target` bytes in its bucket's folder. Yields
    (group, the files written as JSON: {"table", "path", "size", "bucket", "rows"})."""
    import json

    import pyarrow as pa

    from tracelab.spark.paths import store_filesystem

    for batch in batches:
        for group in batch.column(0).to_pylist():
            written = []
            for piece in groups[int(group)]:
                table, bucket = piece["table"], piece["bucket"]
                fs, base = store_filesystem(f"{store}/{table}")
                folder = "" if bucket is None else f"ep_bucket={bucket}/"
                stem = f"{name}" if bucket is None else f"{name}-b{bucket:05d}"
                for file in write_sized(read_batches(fs, base, piece["inputs"]), target, fs,
                                        f"{base}/{folder}".rstrip("/"), stem):
                    written.append({"table": table, "path": folder + file["name"], "size": file["size"],
                                    "bucket": bucket, "rows": file["rows"]})
            yield pa.RecordBatch.from_pydict({"group": [int(group)], "output": [json.dumps(written)]},
                                             schema=pa.schema([("group", pa.int64()), ("output", pa.string())]))


def clear_staged(batches: Iterable[pa.RecordBatch], store: str, groups: list[list[dict[str, Any]]],
                 names: Sequence[str]) -> Iterable[pa.RecordBatch]:
    """`mapInArrow` body run once the ingest committed: each input row is a group number of
    `compact_groups`; removes what the ingests `names` staged for its pieces' buckets (files no
    commit names). Yields (group, 1)."""
    import pyarrow as pa

    from tracelab.spark.paths import store_filesystem

    fs, base = store_filesystem(store)
    for batch in batches:
        for group in batch.column(0).to_pylist():
            for piece in groups[int(group)]:
                inside = "" if piece["bucket"] is None else f"/ep_bucket={piece['bucket']}"
                for name in names:
                    try:
                        fs.delete_dir(f"{base}/{piece['table']}/{STAGING}/{name}{inside}")
                    except (OSError, FileNotFoundError):
                        pass  # nothing staged there
            yield pa.RecordBatch.from_pydict({"group": [int(group)], "done": [1]},
                                             schema=pa.schema([("group", pa.int64()), ("done", pa.int64())]))


def verdict_schema() -> pa.Schema:
    """The Arrow schema of verdict rows as the Spark check writes them (plain 32-bit offsets)."""
    import pyarrow as pa

    kinds = {"passed": pa.bool_(), "step_idx": pa.int32()}
    return pa.schema([(c, kinds.get(c, pa.string())) for c in VERDICT_COLUMNS])


def results_schema() -> pa.Schema:
    """`check_results` as the Spark check writes it: run_id, then the verdict columns."""
    import pyarrow as pa

    return pa.schema([pa.field("run_id", pa.string()), *verdict_schema()])


@dataclasses.dataclass(frozen=True)
class CheckTask:
    """What every check task needs, shipped once to the executors."""

    store: str
    buckets: int
    tasks: int
    suite: Suite
    cases: list[str] | None
    categories: list[str] | None
    strict: bool
    since: datetime | None
    """`check --since`: the watermark; the runs ingested before it keep `carried_run`'s verdicts."""
    carried_run: str | None
    carried_files: list[str]
    """The `check_results` files of `carried_run` (paths relative to the table)."""
    run_id: str
    save: bool
    target: int
    rows: str
    """Which verdict rows the driver reads: "none", "reported" (failures, not exercised), "all"."""
    out: str
    """The check's own folder (`_check/<id>/`) for the rows the driver reads."""


def check_buckets(batches: Iterable[pa.RecordBatch], job: CheckTask) -> Iterable[pa.RecordBatch]:
    """`mapInArrow` body: each input row is a task number t < `job.tasks`; evaluates the buckets b
    with b % tasks == t together, writes their `check_results` files (uncommitted, into the
    table's folder) and the rows the driver reads (into `job.out`), and yields (task, kind, data):
    its partial summaries (`summaries.partials`, Arrow IPC) and "meta" (JSON: rows evaluated,
    files written). The rows never travel through Spark: a million runs make millions of rows."""
    import json

    import pyarrow as pa

    from tracelab.frames import to_ipc
    from tracelab.results.summaries import partials

    schema = check_task_schema()
    for batch in batches:
        for task in batch.column(0).to_pylist():
            mine = [b for b in range(job.buckets) if b % job.tasks == int(task)]
            verdicts, fresh = _verdicts(job, mine)
            parts = _write_results(job, int(task), verdicts) if job.save else []
            listed = _write_rows(job, int(task), verdicts)
            out: dict[str, list[Any]] = {"task": [], "kind": [], "data": []}
            for kind, frame in partials(*_compact(verdicts), job.strict).items():
                out["task"].append(int(task))
                out["kind"].append(kind)
                out["data"].append(to_ipc(frame))
            out["task"].append(int(task))
            out["kind"].append("meta")
            out["data"].append(json.dumps({"fresh": fresh, "rows": verdicts.height, "listed": listed,
                                                  "parts": parts}).encode())
            yield pa.RecordBatch.from_pydict(out, schema=schema)


def check_task_schema() -> pa.Schema:
    import pyarrow as pa

    return pa.schema([("task", pa.int64()), ("kind", pa.string()), ("data", pa.binary())])


def _verdicts(job: CheckTask, mine: list[int]) -> tuple[Any, int]:
    """The verdict rows of the runs of buckets `mine` in the DuckDB engine's order, with `part` (0:
    carried by `check --since`, 1: evaluated) and `unit` (the result unit's rank); how many were evaluated."""
    import polars as pl

    from tracelab.engine.compile import compile_suite
    from tracelab.engine.evaluate import choose_cases, evaluate, renewed_runs
    from tracelab.engine.verdicts import compact, expand
    from tracelab.store import open_store

    chosen = choose_cases(job.suite, job.cases, job.categories)
    units = (compile_suite(job.suite, chosen).frames["p_units"].filter(pl.col("parent_id").is_null())
             .select("case_id", "assertion_id", unit="unit_id"))

    def ordered(frame: pl.DataFrame) -> pl.DataFrame:
        return (frame.join(units, on=["case_id", "assertion_id"], how="left")
                .sort("unit", "episode_id"))

    with open_store(job.store, buckets=mine) as opened:
        fresh = evaluate(opened.con, job.suite, cases=job.cases, categories=job.categories, strict=job.strict,
                         since=job.since).verdicts.select(VERDICT_COLUMNS)
        verdicts = ordered(fresh).with_columns(part=pl.lit(1, pl.Int8))
        if job.carried_run is not None:
            opened.con.register("_tl_carried", _carried_rows(job, mine))
            try:
                carried = opened.sql(
                    f"SELECT {', '.join(VERDICT_COLUMNS)} FROM _tl_carried WHERE run_id = $run "
                    "AND list_contains($cases, case_id) AND (hash(episode_id) % $buckets) IN (SELECT unnest($mine))",
                    {"run": job.carried_run, "cases": [c.id for c in chosen], "buckets": job.buckets, "mine": mine})
            finally:
                opened.con.unregister("_tl_carried")
            # the earlier check's rows of the runs not (re-)ingested since, as the DuckDB engine keeps them
            notable, selection, found = compact(carried)
            renewed = renewed_runs(opened.con, job.since).implode()
            kept = expand(notable.filter(~pl.col("episode_id").is_in(renewed)),
                          selection.filter(~pl.col("episode_id").is_in(renewed)), found).select(VERDICT_COLUMNS)
            verdicts = pl.concat([ordered(kept).with_columns(part=pl.lit(0, pl.Int8)), verdicts])
    return verdicts.cast({"step_idx": pl.Int32}), fresh.height


def _compact(verdicts: Any) -> tuple[Any, Any, Any]:
    """(notable, selection, units) of verdict rows with `part` and `unit`, as `summaries.partials` takes them."""
    from tracelab.engine.verdicts import not_plain_pass

    return (verdicts.filter(not_plain_pass()), verdicts.select("case_id", "episode_id").unique(),
            verdicts.select("case_id", "assertion_id", "assertion_type", "unit").unique())


def carried_files(run_id: str, files: Sequence[str], mine: Sequence[int]) -> list[str]:
    """Those of saved check `run_id`'s `files` that may hold runs of buckets `mine`: a file a Spark
    check wrote is named after its task t of n tasks (``<run>-t<t>-of<n>-...``) and holds the
    buckets b with b % n == t; any other file may hold any."""
    import re

    named = re.compile(rf"{re.escape(run_id)}-t(\d+)-of(\d+)-")
    wanted = []
    for path in files:
        found = named.match(path)
        if found is None or any(b % int(found[2]) == int(found[1]) for b in mine):
            wanted.append(path)
    return wanted


def _carried_rows(job: CheckTask, mine: list[int]) -> pa.Table:
    """The rows of the files of `job.carried_run` that may hold runs of buckets `mine`
    (`carried_files`), `step_idx` NULL where a file lacks it."""
    import pyarrow as pa

    from tracelab.spark.paths import store_filesystem

    fs, base = store_filesystem(f"{job.store}/check_results")
    schema = results_schema()
    tables = []
    for path in carried_files(str(job.carried_run), job.carried_files, mine):
        table = pa.Table.from_batches(list(read_batches(fs, base, [path])))
        if table.num_rows:
            missing = [f for f in schema if f.name not in table.column_names]
            for field in missing:
                table = table.append_column(field, pa.nulls(table.num_rows, field.type))
            tables.append(table.select(schema.names).cast(schema))
    return pa.concat_tables(tables) if tables else schema.empty_table()


def _write_results(job: CheckTask, task: int, verdicts: Any) -> list[dict[str, Any]]:
    """The task's `check_results` rows as files of the target size in the table's folder (uncommitted)."""
    import polars as pl

    from tracelab.spark.paths import store_filesystem

    fs, base = store_filesystem(f"{job.store}/check_results")
    table = (verdicts.with_columns(run_id=pl.lit(job.run_id)).select("run_id", *VERDICT_COLUMNS).to_arrow()
             .cast(results_schema()))
    files = write_sized(table.to_batches(16_384), job.target, fs, base, f"{job.run_id}-t{task:05d}-of{job.tasks:05d}")
    return [{"table": "check_results", "path": f["name"], "size": f["size"], "bucket": None, "rows": f["rows"]}
            for f in files]


def _write_rows(job: CheckTask, task: int, verdicts: Any) -> int:
    """The rows the driver reads for the chosen output, with `part` and `unit` to order them; how many."""
    import polars as pl

    from tracelab.spark.paths import store_filesystem

    if job.rows == "none":
        return 0
    rows = verdicts if job.rows == "all" else verdicts.filter(~pl.col("passed") | (pl.col("exercised") == "no"))
    fs, base = store_filesystem(job.out)
    write_sized(rows.to_arrow().to_batches(ROW_GROUP_ROWS), 1 << 62, fs, base, f"rows-t{task:05d}")
    return int(rows.height)


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


__all__ = ["SOURCE_COLUMNS", "STAGING", "VERDICT_COLUMNS", "CheckTask", "ChunkOutput", "check_buckets",
           "clear_staged", "compact_groups", "find_collisions", "ingest_chunk", "ingest_chunks", "results_schema",
           "verdict_schema", "write_sized"]
