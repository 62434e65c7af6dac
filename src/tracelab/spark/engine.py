"""The Spark driver: `ingest`, `check` and `cover` with `--engine spark` (docs/cli.md §1, Scale-out).

The same DuckDB engine runs inside the Spark tasks, so verdicts are the DuckDB engine's (RE2,
`lower()`, the JSON leaf rules and the pairing rule are all part of them): Spark only spreads the
work and moves Arrow batches.

- check / cover: one task per `ep_bucket` partition of the runs opens the Parquet store
  restricted to that partition (`open_store(..., buckets=[b])`) and evaluates the compiled suite
  (`tracelab.engine.evaluate`); the driver orders the verdict rows as the DuckDB engine does and
  builds case summaries and coverage with the same library code (`build_result`, `Coverage`).
- ingest: the files, in path order, are cut into contiguous chunks; each task ingests one chunk
  with `Store.ingest` into a task-local DuckDB store and stages Parquet parts. The driver then
  commits chunk by chunk, in order, through the journal of `tracelab.spark.layout`. A chunk whose
  episodes or file hashes collide with what is stored (or with an earlier chunk) is ingested again
  on the driver with those episodes seeded, so that skip / conflict / `--replace` decide exactly as
  in one DuckDB store.
"""
from __future__ import annotations

import json
import os
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tracelab.errors import Interrupted, StoreError, UsageError, is_interrupt
from tracelab.spark.layout import PARTITIONED, Layout, commit, local_path, open_layout, recover, writer_lock
from tracelab.sqlfiles import path_literal

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from tracelab.ingest.batches import IngestReport
    from tracelab.results.check import CheckRun
    from tracelab.results.cover import Coverage

MASTER_ENV = "TRACELAB_SPARK_MASTER"
CHUNK_BYTES = 64 << 20
"""Target input bytes per ingest task: large enough that a task's fixed cost (a DuckDB store, a
Python worker) is small next to its work, small enough to spread a corpus over many executors."""
TASKS_PER_CORE = 2
"""check/cover tasks per executor core: each task evaluates its share of the `ep_bucket`
partitions in one evaluation (a task's fixed cost, a DuckDB store and a Python worker, is paid once per task)."""
TIMINGS: dict[str, float] = {}
"""Where the last `check` / `ingest` spent its time (benchmarks/spark_bench.py reads it)."""
WAVE_TASKS = 8
"""Chunks per executor core committed together: a kill loses at most one wave's work."""


def master_url(master: str | None = None) -> tuple[str, str]:
    """('master' or 'remote', URL): `--spark-master`, `$TRACELAB_SPARK_MASTER`, `$SPARK_REMOTE`, local[*]."""
    if master:
        return "master", master
    if os.environ.get(MASTER_ENV):
        return "master", os.environ[MASTER_ENV]
    if os.environ.get("SPARK_REMOTE"):
        return "remote", os.environ["SPARK_REMOTE"]
    return "master", "local[*]"


def _first_line(exc: BaseException) -> str:
    """The first line of an error's message, without the Java stack py4j appends (py4j's own
    first line, "An error occurred while calling ...", gives way to the Java exception's)."""
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    if len(lines) > 1 and lines[0].startswith("An error occurred while calling"):
        lines = lines[1:]
    return lines[0].lstrip(": ")[:300] if lines else type(exc).__name__


_QUIET_LOG4J = """\
rootLogger.level = off
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex
"""
"""Spark's log while it starts: nothing (a master that cannot be reached logs a Java stack per
retry); `session` sets the level to ERROR once it runs, as before."""


def _quiet_start(builder: Any) -> Any:
    """`builder` with a log configuration that is silent until the session runs, unless the
    user gave the driver JVM options of their own."""
    import tempfile

    if os.environ.get("PYSPARK_SUBMIT_ARGS"):
        return builder
    try:
        folder = Path(tempfile.mkdtemp(prefix="tracelab-log4j-"))  # private: mode 0700, a new name
        config = folder / "log4j2-quiet.properties"
        config.write_text(_QUIET_LOG4J)
    except OSError:
        return builder
    return builder.config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={config.as_uri()}")


def session(master: str | None = None) -> SparkSession:
    """The active SparkSession, or a new one on the cluster `master_url` names."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise UsageError("--engine spark needs pyspark: pip install 'tracelab[spark]'") from None
    import warnings

    # pyspark warns about pandas versions on every Arrow call; tracelab exchanges Arrow only
    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas")
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    # the executors run this interpreter's tracelab when they are local
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    kind, url = master_url(master)
    builder = SparkSession.builder.appName("tracelab")
    tty = sys.stderr.isatty()
    try:
        builder = builder.remote(url) if kind == "remote" else _quiet_start(builder.master(url))
        spark = (builder.config("spark.ui.showConsoleProgress", "true" if tty else "false")
                 .config("spark.sql.execution.arrow.maxRecordsPerBatch", "100000")
                 .getOrCreate())
    except ImportError as exc:  # Spark Connect's client needs grpcio, pandas...
        raise UsageError(f"Spark Connect ({url}) needs packages that are not installed ({_first_line(exc)}): "
                         "pip install 'pyspark[connect]'") from None
    except SystemExit:
        # pyspark's connect client exits (status 0) instead of raising when its packages are
        # missing and the main module has no file (`python -c`, some notebook and test runners)
        raise UsageError(f"Spark Connect ({url}) needs packages that are not installed: "
                         "pip install 'pyspark[connect]'") from None
    except Exception as exc:
        if is_interrupt(exc):
            raise KeyboardInterrupt from None
        raise UsageError(f"Spark could not start on {url} ({_first_line(exc)}); check --spark-master, "
                         f"${MASTER_ENV} or $SPARK_REMOTE") from None
    if kind == "master":
        spark.sparkContext.setLogLevel("ERROR")
    return spark


# --- check and cover ---------------------------------------------------------------------


def check(store: str | os.PathLike[str], suite_path: str | os.PathLike[str], *,
          cases: list[str] | None = None, categories: list[str] | None = None, strict: bool = False,
          allow_ineffective: bool = False, save: bool = True, since: str | None = None,
          master: str | None = None) -> CheckRun:
    """`tracelab.results.check.check` over a Parquet store, evaluated on Spark; same verdicts and summaries.

    Saved results go to the store's `check_runs/` and `check_results/` (read by `sql` and `view`).
    `since` (`check --since RUN_ID`) evaluates only the runs ingested after that saved check
    started, in the tasks, and keeps its verdicts for the others, as the DuckDB engine does.
    """

    from tracelab.engine.evaluate import _merge as merge_carried  # the DuckDB engine's own merge
    from tracelab.engine.evaluate import choose_cases
    from tracelab.engine.verdicts import build_result
    from tracelab.results.check import CheckRun, previous_run, refuse_findings
    from tracelab.suite import load_suite

    root = local_path(store)
    layout = open_layout(root, create=False)
    started = datetime.now(timezone.utc)
    clock = time.perf_counter()
    suite = load_suite(suite_path)
    chosen = choose_cases(suite, cases, categories)
    if not allow_ineffective:
        refuse_findings(suite)
    watermark = carried = None
    if since is not None:
        with _driver_store(root) as opened:
            watermark, carried = previous_run(opened, suite, since, chosen)
    spark = session(master)
    tasks = min(layout.buckets, TASKS_PER_CORE * _parallelism(spark))
    spark_clock = time.perf_counter()
    with _verdict_folder(layout) as out:
        written = _evaluate(spark, out, str(root.resolve()), layout.buckets, tasks, suite, cases, categories,
                            strict, watermark)
        driver_clock = time.perf_counter()
        frame = _read_verdicts(out, written)
    ordered = _in_engine_order(frame, suite, chosen)
    if carried is not None:
        with _driver_store(root) as opened:
            ordered = merge_carried(opened.con, ordered, carried, watermark)
    result = build_result(suite.name, chosen, ordered, strict)
    elapsed_ms = round((time.perf_counter() - clock) * 1000)
    TIMINGS.update(check_tasks=tasks, check_spark_s=driver_clock - spark_clock,
                   check_driver_s=time.perf_counter() - driver_clock, check_rows=frame.height)
    run_id = uuid.uuid4().hex[:16]
    if save:
        _save(layout, suite, result, run_id, started, elapsed_ms, since)
    return CheckRun(result, suite, run_id, str(root), elapsed_ms, save)


def _evaluate(spark: Any, out: Path, store: str, buckets: int, tasks: int, suite: Any, cases: list[str] | None,
              categories: list[str] | None, strict: bool, since: datetime | None) -> int:
    """Run the check's tasks (`tasks.evaluate_buckets`); how many verdict rows they wrote."""
    from tracelab.spark.tasks import evaluate_buckets, task_schema

    out_text = str(out)

    def body(batches):  # type: ignore[no-untyped-def]
        return evaluate_buckets(batches, store, buckets, tasks, suite, cases, categories, strict, since, out_text)

    counts = _collect(spark.range(0, tasks, 1, numPartitions=tasks).mapInArrow(body, _spark_schema(task_schema())))
    return int(sum(counts.column("rows").to_pylist()))


@contextmanager
def _verdict_folder(layout: Layout) -> Iterator[Path]:
    """A fresh folder of the store (`_check/<id>/`, which no reader lists) for the tasks' verdict
    files; removed when the check is done, or stopped."""
    import shutil

    folder = layout.root / "_check" / uuid.uuid4().hex[:16]
    folder.mkdir(parents=True)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _read_verdicts(folder: Path, expected: int) -> Any:
    """The verdict rows the tasks wrote, as one Polars frame in the tasks' schema.

    Raises:
        StoreError: fewer rows than the tasks reported (a file lost on the shared file system).
    """
    import polars as pl
    import pyarrow as pa
    import pyarrow.parquet as pq

    from tracelab.spark.tasks import verdict_schema

    files = sorted(folder.glob("task-*.parquet"))
    table = pa.concat_tables([pq.read_table(f) for f in files]) if files else verdict_schema().empty_table()
    if table.num_rows != expected:
        raise StoreError(f"{folder}: the check's tasks wrote {expected} verdict rows, {table.num_rows} are "
                         "there; is the store on a file system every node shares?")
    frame = pl.from_arrow(table.cast(verdict_schema()))
    assert isinstance(frame, pl.DataFrame)
    return frame


def _driver_store(root: Path) -> Any:
    """The Parquet store opened on the driver (read-only, with its saved checks), for `--since`."""
    from tracelab.store import open_store

    return open_store(root, read_only=True)


def cover(store: str | os.PathLike[str], suite_path: str | os.PathLike[str], *,
          cases: list[str] | None = None, categories: list[str] | None = None,
          master: str | None = None) -> Coverage:
    """`tracelab.results.cover.cover` on Spark: one evaluation (nothing saved), aggregated by the library."""
    from tracelab.results.cover import Coverage

    run = check(store, suite_path, cases=cases, categories=categories, allow_ineffective=True,
                save=False, master=master)
    return Coverage(run)


def _parallelism(spark: Any) -> int:
    """The cluster's task slots (Spark Connect has no SparkContext: its configured default, else 8)."""
    try:
        return max(1, int(spark.sparkContext.defaultParallelism))
    except Exception:  # noqa: BLE001 - Spark Connect raises its own "not supported" error here
        return max(1, int(spark.conf.get("spark.default.parallelism", "8")))


def _collect(frame: Any) -> Any:
    """The rows of a Spark DataFrame as one Arrow table; Ctrl-C cancels the job."""
    try:
        return frame.toArrow()
    except KeyboardInterrupt:
        try:
            frame.sparkSession.sparkContext.cancelAllJobs()
        except Exception:  # noqa: BLE001 - Spark Connect: interrupt through the session instead
            frame.sparkSession.interruptAll()
        raise


def _spark_schema(schema: Any) -> Any:
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(schema)


def _in_engine_order(frame: Any, suite: Any, chosen: Any) -> Any:
    """The verdict rows in the DuckDB engine's order: by result unit (suite order), then run."""
    import polars as pl

    from tracelab.engine.compile import compile_suite

    units = (compile_suite(suite, chosen).frames["p_units"].filter(pl.col("parent_id").is_null())
             .select("case_id", "assertion_id", order="unit_id"))
    return (frame.join(units, on=["case_id", "assertion_id"], how="left")
            .sort("order", "episode_id").drop("order"))


def _save(layout: Layout, suite: Any, result: Any, run_id: str, started: datetime, elapsed_ms: int,
          since: str | None) -> None:
    """check_results first, then the check_runs row that makes the run visible (each file atomic);
    the columns and types of the DuckDB store's tables (sql/store/schema/tables.sql)."""
    import polars as pl
    import pyarrow as pa
    import pyarrow.parquet as pq

    from tracelab.results.check import tool_overrides
    from tracelab.results.saved import RESULT_COLUMNS
    from tracelab.spark.layout import atomic_write

    rows = result.verdicts.with_columns(run_id=pl.lit(run_id)).select("run_id", *RESULT_COLUMNS)
    run = pa.table({
        "run_id": [run_id], "suite": [suite.name], "suite_sha256": [suite.sha256],
        "started_at": pa.array([started], pa.timestamp("us", tz="UTC")),
        "elapsed_ms": pa.array([elapsed_ms], pa.int64()),
        "cases": pa.array([[case.id for case in result.cases]], pa.list_(pa.string())),
        "since_run": pa.array([since], pa.string()),
        "failed_cases": pa.array([[case.id for case in result.cases if not case.passed]], pa.list_(pa.string())),
        "tools": pa.array([tool_overrides(suite)], pa.list_(pa.struct([
            ("pattern", pa.string()), ("effect", pa.string()), ("regex", pa.string()), ("is_glob", pa.bool_())]))),
    })
    for table, data in (("check_results", rows.to_arrow()), ("check_runs", run)):
        folder = layout.root / table
        folder.mkdir(exist_ok=True)
        sink = pa.BufferOutputStream()
        pq.write_table(data, sink)
        atomic_write(folder / f"{run_id}.parquet", sink.getvalue().to_pybytes())


# --- ingest ------------------------------------------------------------------------------


@dataclass
class _Chunk:
    index: int
    files: list[tuple[str, str | None]]
    """(path or URL, why it is skipped or None), as `tracelab.ingest.pipeline.Input` says it."""


def ingest(store: str | os.PathLike[str], paths: Sequence[str | os.PathLike[str]], fmt: str = "auto", *,
           replace: bool = False, buckets: int | None = None, master: str | None = None,
           chunk_bytes: int = CHUNK_BYTES, wait: float = 0,
           progress: Callable[[str], None] | None = None) -> IngestReport:
    """Ingest files, folders or globs into a Parquet store on Spark (docs/trace-format.md §5, §6 rules hold).

    Args:
        store: the store folder, a path or ``file://`` URL (created when missing; a folder
            written by `export` is adopted).
        paths: files, folders and globs; also URLs (`tracelab.spark.paths`).
        buckets: `ep_bucket` partitions of a new store (default 16, as `export`); recorded in it.
        chunk_bytes: target input bytes per task.
        wait: while another ingest writes the store, wait for it up to this many seconds.
        progress: called with one line per committed wave.

    Raises:
        UsageError: no such path, a URL that cannot be read, or no file at all.
        Interrupted: Ctrl-C or SIGTERM; the store holds exactly the committed files.
    """

    if fmt != "auto":
        from tracelab.formats import get_format

        get_format(fmt)  # an unknown format name is a usage error before Spark starts
    inputs = _inputs(paths)
    if not inputs:
        raise UsageError(f"no files found in {', '.join(str(p) for p in paths)}")
    layout = open_layout(local_path(store), create=True, buckets=buckets)
    with writer_lock(layout, wait):
        recover(layout)
        return _ingest(layout, _chunks(inputs, chunk_bytes), len(inputs), fmt, replace, master, progress)


def _ingest(layout: Layout, chunks: list[_Chunk], total: int, fmt: str, replace: bool, master: str | None,
            progress: Callable[[str], None] | None) -> IngestReport:
    """The waves of an ingest, under the store's writer lock."""
    from tracelab.ingest.batches import FileReport, IngestReport

    spark = session(master)
    wave = _parallelism(spark) * WAVE_TASKS
    report = IngestReport()
    done = 0
    TIMINGS.update(ingest_spark_s=0.0, ingest_commit_s=0.0, ingest_chunks=len(chunks))
    try:
        for start in range(0, len(chunks), wave):
            outputs = _run_wave(spark, layout, chunks[start:start + wave], fmt, replace)
            for output in outputs:
                report.files.extend(FileReport(**f) for f in output["files"])
            done = start + len(outputs)
            if progress is not None:
                progress(f"committed {sum(len(c.files) for c in chunks[:done])} of {total} files")
    except Exception as exc:
        if not is_interrupt(exc):
            raise
        committed = sum(len(c.files) for c in chunks[:done])
        raise Interrupted(f"interrupted: {committed} of {total} files committed to {layout.root}; "
                          "the rest are not in the store (run the same ingest again to complete it)") from None
    return report


def _inputs(paths: Sequence[str | os.PathLike[str]]) -> list[tuple[str, str | None, int]]:
    """(path or URL, why it is skipped or None, size) of every input, in the order the DuckDB
    engine reads them: local paths through `tracelab.ingest.pipeline.scan_inputs`, URLs listed remotely."""
    from tracelab.ingest.inputs import scan_inputs
    from tracelab.spark.paths import list_files
    from tracelab.spark.paths import local_path as input_path

    out: list[tuple[str, str | None, int]] = []
    for raw in paths:
        local = input_path(raw, what="input")
        if local is None:
            out.extend((url, None, size) for url, size in list_files(os.fspath(raw)))
            continue
        for item in scan_inputs([local]):
            try:
                size = os.stat(item.path).st_size if item.skip is None else 0
            except OSError:
                size = 0  # the task reports it as it cannot read it
            out.append((item.path, item.skip, size))
    return out


def _chunks(inputs: list[tuple[str, str | None, int]], chunk_bytes: int) -> list[_Chunk]:
    """Contiguous runs of inputs (in their order) of about `chunk_bytes` each."""
    chunks: list[_Chunk] = []
    current: list[tuple[str, str | None]] = []
    size = 0
    for path, skip, nbytes in inputs:
        current.append((path, skip))
        size += nbytes
        if size >= chunk_bytes:
            chunks.append(_Chunk(len(chunks), current))
            current, size = [], 0
    if current:
        chunks.append(_Chunk(len(chunks), current))
    return chunks


def _run_wave(spark: Any, layout: Layout, chunks: list[_Chunk], fmt: str, replace: bool) -> list[dict[str, Any]]:
    """Ingest a wave of chunks on Spark, then commit them in order; their outputs."""
    import shutil

    import pyarrow as pa

    from tracelab.spark.tasks import ingest_chunks

    staging = layout.staging()
    known = _known_sources(layout)
    staging_text, buckets = str(staging), layout.buckets

    files = {c.index: c.files for c in chunks}

    def body(batches):  # type: ignore[no-untyped-def]
        return ingest_chunks(batches, files, fmt, replace, staging_text, buckets, known)

    # one task per chunk, numbered: no data to shuffle (the chunks' file lists travel with `body`)
    first = chunks[0].index
    frame = spark.range(first, first + len(chunks), 1, numPartitions=len(chunks))
    out_schema = _spark_schema(pa.schema([("chunk", pa.int64()), ("output", pa.string())]))
    clock = time.perf_counter()
    result = _collect(frame.mapInArrow(body, out_schema))
    outputs = {row["chunk"]: json.loads(row["output"]) for row in result.to_pylist()}
    committing = time.perf_counter()
    committed = []
    for chunk in chunks:
        committed.append(_commit_chunk(layout, staging, chunk, outputs[chunk.index], fmt, replace))
    TIMINGS["ingest_spark_s"] = TIMINGS.get("ingest_spark_s", 0.0) + committing - clock
    TIMINGS["ingest_commit_s"] = TIMINGS.get("ingest_commit_s", 0.0) + time.perf_counter() - committing
    shutil.rmtree(staging, ignore_errors=True)
    return committed


def _known_sources(layout: Layout) -> Any:
    """The store's `sources` rows (`tasks.SOURCE_COLUMNS`) as Arrow: every task is seeded with them."""
    from tracelab.spark.tasks import SOURCE_COLUMNS

    con = _read(layout)
    try:
        return con.sql(f"SELECT {', '.join(SOURCE_COLUMNS)} FROM sources").to_arrow_table()
    finally:
        con.close()


def _read(layout: Layout) -> Any:
    """A plain DuckDB connection with views `episodes` (id and hash) and `sources` over the store's
    parts: the driver's lookups need those columns, not the whole store's views."""
    import duckdb

    from tracelab.spark.tasks import SOURCE_COLUMNS

    con = duckdb.connect()
    try:
        episodes = _parts(layout, "episodes")
        # a view takes no bound parameter: the file list is written as literals (our own paths)
        con.execute("CREATE VIEW episodes AS SELECT episode_id, content_hash FROM read_parquet("
                    f"{_list_literal(episodes)}, hive_partitioning = false)")
        sources = con.sql(f"SELECT * FROM read_parquet({_list_literal(_parts(layout, 'sources'))})")
        # an export made before `sources` recorded file size and time: NULL, as the store reads it
        columns = ", ".join(c if c in sources.columns else f"NULL::BIGINT AS {c}" for c in SOURCE_COLUMNS)
        con.execute(f"CREATE VIEW sources AS SELECT {columns} FROM read_parquet("
                    f"{_list_literal(_parts(layout, 'sources'))})")
    except duckdb.Error as exc:
        con.close()
        raise StoreError(f"{layout.root}: the Parquet store cannot be read ({exc})") from None
    return con


def _parts(layout: Layout, table: str) -> list[str]:
    """The Parquet files of a table (partition folders included), in name order."""
    pattern = "ep_bucket=*/*.parquet" if table in PARTITIONED else "*.parquet"
    return sorted(str(p) for p in (layout.root / table).glob(pattern))


def _commit_chunk(layout: Layout, staging: Path, chunk: _Chunk, output: dict[str, Any], fmt: str,
                  replace: bool) -> dict[str, Any]:
    """Publish one chunk's staged parts; first re-ingest it seeded when it collides with the store."""
    parts = [staging / p for p in output["parts"]]
    seeds = _collisions(layout, parts, replace)
    rewrites = _Rewrites(layout, staging, chunk.index)
    if seeds is not None:
        for part in parts:
            part.unlink()
        from tracelab.spark.tasks import ingest_chunk

        redo = ingest_chunk(chunk.index, chunk.files, fmt, replace, str(staging), layout.buckets,
                            _known_sources(layout), seeds)
        output = {"chunk": chunk.index, "files": redo.files, "parts": redo.parts, "replaced": redo.replaced}
        parts = [staging / p for p in redo.parts]
        for table in PARTITIONED:  # --replace: the stored rows of the episodes it replaced go
            rewrites.drop(table, "episode_id IN (SELECT unnest($ids))", {"ids": redo.replaced})
    if replace:
        _forget_sources(rewrites, [p for p in parts if p.parent.name == "sources"])
    renames = [(p, layout.root / p.relative_to(staging)) for p in parts + rewrites.written]
    # one journal per chunk, named after the wave's staging folder so `recover` applies them in order
    commit(layout, layout.root / "_txn" / f"{staging.name}-{chunk.index:06d}", renames, rewrites.deleted)
    return output


def _collisions(layout: Layout, parts: list[Path], replace: bool) -> list[tuple[str, str]] | None:
    """None when the staged chunk can be published as it is: it shares no episode id with the
    store, nor (without `replace`) a file hash. Else the stored (episode_id, content_hash) pairs to
    seed a re-ingest with, so that the library decides as in one store."""
    import duckdb

    episodes = [str(p) for p in parts if p.parts[-3] == "episodes"]
    sources = [str(p) for p in parts if p.parts[-2] == "sources"]
    staged = duckdb.connect()
    ids = [r[0] for r in staged.execute("SELECT episode_id FROM read_parquet(?, hive_partitioning = false)",
                                        [episodes]).fetchall()] if episodes else []
    hashes = [r[0] for r in staged.execute("SELECT content_hash FROM read_parquet(?)",
                                           [sources]).fetchall()] if sources and not replace else []
    staged.close()
    con = _read(layout)
    try:
        seeds = [(r[0], r[1]) for r in con.execute(
            "SELECT episode_id, content_hash FROM episodes WHERE episode_id IN (SELECT unnest(?))",
            [ids]).fetchall()] if ids else []
        # a file whose content an earlier chunk of this ingest stored: the re-ingest, seeded with
        # the store's sources, reports it already ingested
        known = con.execute("SELECT count(*) FROM sources WHERE content_hash IN (SELECT unnest(?))",
                            [hashes]).fetchall()[0][0] if hashes else 0
    finally:
        con.close()
    return seeds if seeds or known else None


def _forget_sources(rewrites: _Rewrites, staged: list[Path]) -> None:
    """--replace read recorded files again: their earlier `sources` rows and the quarantine rows
    of those reads make way for the new ones (the store-wide half of sql/ingest/forget_source.sql)."""
    import duckdb

    if not staged:
        return
    with duckdb.connect() as con:
        pairs = con.execute("SELECT source_uri, content_hash FROM read_parquet(?)",
                            [[str(p) for p in staged]]).fetchall()
    stored = _read(rewrites.layout)
    try:
        recorded = {tuple(r) for r in stored.execute(
            "SELECT source_uri, content_hash FROM sources WHERE content_hash IN (SELECT unnest(?))",
            [[h for _, h in pairs]]).fetchall()}
    finally:
        stored.close()
    uris = [uri for uri, digest in pairs if (uri, digest) in recorded]
    rewrites.drop("quarantine", "source_uri IN (SELECT unnest($uris))", {"uris": uris})
    rewrites.drop("sources", "content_hash IN (SELECT unnest($hashes))", {"hashes": [h for _, h in pairs]})


class _Rewrites:
    """Stored parts rewritten without some rows, staged with a chunk and published by its commit."""

    def __init__(self, layout: Layout, staging: Path, chunk: int) -> None:
        self.layout = layout
        self.staging = staging
        self.chunk = chunk
        self.deleted: list[Path] = []
        self.written: list[Path] = []

    def drop(self, table: str, where: str, params: dict[str, Any]) -> None:
        """Rewrite the parts of `table` holding rows that match `where` (bound `params`) without them."""
        import duckdb

        if not any(params.values()):
            return
        files = [p for p in _parts(self.layout, table) if Path(p) not in self.deleted]
        if not files:
            return
        hive = "false"  # the partition is the folder the rewrite goes to, not a column of the part
        with duckdb.connect() as con:
            holding = [r[0] for r in con.execute(
                f"SELECT DISTINCT filename FROM read_parquet($files, filename = true, hive_partitioning = {hive}) "
                f"WHERE {where}", {"files": files, **params}).fetchall()]
            for name in holding:
                old = Path(name)
                folder = old.parent.relative_to(self.layout.root)
                new = self.staging / folder / f"{old.stem}-r{self.chunk:06d}{uuid.uuid4().hex[:6]}.parquet"
                new.parent.mkdir(parents=True, exist_ok=True)
                con.execute(f"COPY (SELECT * FROM read_parquet($file, hive_partitioning = {hive}) "
                            f"WHERE NOT ({where})) TO {path_literal(new)} (FORMAT parquet)",
                            {"file": name, **params})
                self.deleted.append(old)
                self.written.append(new)


def _list_literal(paths: list[str]) -> str:
    return "[" + ", ".join(path_literal(p) for p in paths) + "]"
