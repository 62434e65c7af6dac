"""The Spark driver: `ingest`, `check` and `cover` with `--engine spark` (docs/cli.md §1, Scale-out).

The same DuckDB engine runs inside the Spark tasks, so verdicts are the DuckDB engine's (RE2,
`lower()`, the JSON leaf rules and the pairing rule are all part of them): Spark only spreads the
work and moves Arrow batches.

- check / cover: one task per group of `ep_bucket` partitions of the runs opens the Delta store
  restricted to them (`open_store(..., buckets=...)`), evaluates the compiled suite
  (`tracelab.engine.evaluate`), writes its `check_results` files and sums its verdicts
  (`tracelab.results.summaries`); the driver adds up the sums into the case verdicts, summary
  counts, failing assertions and the rows `view` reads, and reads only the verdict rows the
  report lists (`rows`).
- ingest: the files, in path order, are cut into contiguous chunks; each task ingests one chunk
  with `Store.ingest` into a task-local DuckDB store and stages its rows as Parquet files in the
  store's table folders. A join in the tasks, one per `ep_bucket`, finds the episode ids that two
  chunks, or a chunk and the store, share; the driver takes the chunks in order into a snapshot
  of the store (`_Snapshot`), ingesting again only those that collide, seeded with the episodes
  they collide with, so that skip / conflict / `--replace` decide exactly as in one DuckDB store.
  Then the tasks rewrite each bucket's rows into files of the target size, and the driver commits
  the whole ingest at once (`tracelab.spark.layout.commit`: one Delta transaction per table,
  then the head).
What stays on the driver grows with the files, chunks and buckets (their file lists and
reports), the suite (the sums) and the colliding chunks, not with the runs.
"""
from __future__ import annotations

import dataclasses
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
from tracelab.spark.layout import (
    FLAT,
    PARTITIONED,
    TARGET_FILE_SIZE,
    Change,
    Layout,
    commit,
    local_path,
    open_layout,
    recover,
    writer_lock,
)
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
TIMINGS: dict[str, Any] = {}
"""Where the last `check` / `ingest` spent its time (benchmarks/spark_bench.py reads it)."""
WAVE_TASKS = 8
"""Chunks per executor core run in one Spark job: the ingest reports its progress per wave."""


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
          master: str | None = None, rows: str = "all", target_file_size: int = TARGET_FILE_SIZE) -> CheckRun:
    """`tracelab.results.check.check` over a Delta store, evaluated on Spark; same verdicts and summaries.

    The tasks summarise their verdicts (`tracelab.results.summaries`); the driver merges those
    summaries and reads only the verdict rows the output lists (`rows`): "none" (the text report,
    a benchmark: the case verdicts, summary counts and first `EXAMPLES` failing runs of each
    failing assertion come with the summaries), "reported" (the failures and not-exercised rows:
    `--format json` and junit), or "all" (`--all-results`, `cover`, baselines).
    Saved results go to the store's `check_runs/`, `check_results/` (files of `target_file_size`
    bytes written by the tasks) and the tables `view` reads, in one store commit.
    `since` (`check --since RUN_ID`) evaluates only the runs ingested after that saved check
    started, in the tasks, and keeps its verdicts for the others, as the DuckDB engine does.
    """
    from tracelab.engine.evaluate import choose_cases
    from tracelab.engine.verdicts import build_result
    from tracelab.results.check import CheckRun, refuse_findings
    from tracelab.results.summaries import merge
    from tracelab.spark.tasks import CheckTask
    from tracelab.suite import load_suite

    if rows not in ("none", "reported", "all"):
        raise ValueError(f"rows={rows!r}: none, reported or all")
    root = local_path(store)
    layout = open_layout(root, create=False)
    started = datetime.now(timezone.utc)
    clock = time.perf_counter()
    suite = load_suite(suite_path)
    chosen = choose_cases(suite, cases, categories)
    if not allow_ineffective:
        refuse_findings(suite)
    watermark = _since(root, suite, since, chosen) if since is not None else None
    spark = session(master)
    tasks = min(layout.buckets, TASKS_PER_CORE * _parallelism(spark))
    run_id = uuid.uuid4().hex[:16]
    with _check_folder(layout) as out:
        job = CheckTask(root, layout.buckets, tasks, suite, cases, categories, strict, watermark, since,
                        _files_of(layout, since) if since is not None else [], run_id, save, target_file_size,
                        rows, out)
        spark_clock = time.perf_counter()
        outputs = _evaluate(spark, job)
        driver_clock = time.perf_counter()
        found, metas = _outputs(outputs)
        verdicts = _read_rows(out, sum(m["listed"] for m in metas))
    aggregated = merge(found, suite.name, chosen, strict, verdicts, rows)
    result = build_result(suite.name, chosen, verdicts, strict) if rows == "all" else aggregated
    elapsed_ms = round((time.perf_counter() - clock) * 1000)
    if save:
        parts = [part for m in metas for part in m["parts"]]
        _save(layout, suite, aggregated, parts, run_id, started, elapsed_ms, since)
    TIMINGS.update(check_tasks=tasks, check_spark_s=driver_clock - spark_clock,
                   check_driver_s=time.perf_counter() - driver_clock,
                   check_rows=sum(m["fresh"] for m in metas), check_results=aggregated.summary.results,
                   check_listed=verdicts.height)
    return CheckRun(result, suite, run_id, root, elapsed_ms, save)


def _since(root: str, suite: Any, since: str, chosen: Any) -> datetime:
    """When saved check `since` started (`check --since`), once `previous_run` accepts it; its
    verdicts are read by the tasks, each for its own runs.

    Raises:
        UsageError: as `tracelab.results.check.previous_run`.
    """
    from tracelab.results.check import previous_run

    with _driver_store(root) as opened:
        # no chosen case: the checks on the run, not its rows (the tasks read those)
        watermark = previous_run(opened, suite, since, ())
        [(checked,)] = opened.con.execute("SELECT cases FROM check_runs WHERE run_id = ?", [since]).fetchall()
    missing = [case.id for case in chosen if case.id not in (checked or [])]
    if missing:
        raise UsageError(f"--since {since}: that run did not check case {missing[0]!r}; run a full check first")
    return watermark


def _files_of(layout: Layout, run_id: str) -> list[str]:
    """The `check_results` files (relative to the table, at the head) that may hold saved check
    `run_id`'s rows: by the statistics of its `run_id` column where the file has them."""
    import pyarrow as pa
    from deltalake import DeltaTable

    table = DeltaTable(layout.table("check_results"), version=layout.versions["check_results"])
    actions = pa.table(table.get_add_actions(flatten=True))
    names = actions.column_names
    low = actions.column("min.run_id").to_pylist() if "min.run_id" in names else [None] * actions.num_rows
    high = actions.column("max.run_id").to_pylist() if "max.run_id" in names else [None] * actions.num_rows
    return [path for path, lo, hi in zip(actions.column("path").to_pylist(), low, high, strict=True)
            if lo is None or hi is None or lo <= run_id <= hi]


def _evaluate(spark: Any, job: Any) -> Any:
    """Run the check's tasks (`tasks.check_buckets`): their (task, kind, data) rows as Arrow."""
    from tracelab.spark.tasks import check_buckets, check_task_schema

    def body(batches):  # type: ignore[no-untyped-def]
        return check_buckets(batches, job)

    frame = spark.range(0, job.tasks, 1, numPartitions=job.tasks)
    return _collect(frame.mapInArrow(body, _spark_schema(check_task_schema())))


def _outputs(table: Any) -> tuple[dict[str, list[Any]], list[dict[str, Any]]]:
    """The tasks' partial summaries by kind, and their "meta" records."""
    from tracelab.frames import from_ipc

    found: dict[str, list[Any]] = {}
    metas: list[dict[str, Any]] = []
    for row in table.to_pylist():
        if row["kind"] == "meta":
            metas.append(json.loads(row["data"]))
        else:
            found.setdefault(row["kind"], []).append(from_ipc(row["data"]))
    return found, metas


@contextmanager
def _check_folder(layout: Layout) -> Iterator[str]:
    """A fresh folder of the store (`_check/<id>/`, which no reader lists) for the verdict rows
    the tasks write for the driver; removed when the check is done, or stopped."""
    from tracelab.spark.paths import store_filesystem

    folder = f"{layout.url}/_check/{uuid.uuid4().hex[:16]}"
    try:
        yield folder
    finally:
        fs, path = store_filesystem(folder)
        try:
            fs.delete_dir(path)
        except OSError:
            pass  # no task wrote anything


def _read_rows(folder: str, expected: int) -> Any:
    """The verdict rows the tasks wrote for the driver, in the DuckDB engine's order: by `part`
    (carried rows first), result unit (suite order), then run.

    Raises:
        StoreError: fewer rows than the tasks reported (a file lost on the shared file system).
    """
    import polars as pl
    import pyarrow as pa
    import pyarrow.parquet as pq

    from tracelab.spark.paths import list_folder, store_filesystem
    from tracelab.spark.tasks import VERDICT_COLUMNS, verdict_schema

    fs, path = store_filesystem(folder)
    try:
        found = list_folder(fs, path)
    except OSError:
        found = []
    files = sorted(f.path for f in found if f.base_name.startswith("rows-"))
    tables = [pq.read_table(f, filesystem=fs) for f in files]
    table = pa.concat_tables(tables, promote_options="permissive") if tables else None
    if (table.num_rows if table is not None else 0) != expected:
        raise StoreError(f"{folder}: the check's tasks wrote {expected} verdict rows, "
                         f"{table.num_rows if table is not None else 0} are there; is the store reachable "
                         "from every node?")
    if table is None:
        return pl.DataFrame(verdict_schema().empty_table())
    frame = pl.from_arrow(table)
    assert isinstance(frame, pl.DataFrame)
    return (frame.sort("part", "unit", "episode_id").select(VERDICT_COLUMNS)
            .cast({"step_idx": pl.Int32}))


def _driver_store(root: str) -> Any:
    """The Delta store opened on the driver (read-only, with its saved checks), for `--since`."""
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


def _save(layout: Layout, suite: Any, result: Any, parts: list[dict[str, Any]], run_id: str, started: datetime,
          elapsed_ms: int, since: str | None) -> None:
    """The check's store commit (tracelab.spark.layout): the `check_results` files its tasks wrote,
    its `check_runs` row and the rows `view` reads (`result.view_rows`), in the columns and types of
    the DuckDB store's tables (sql/store/schema/)."""
    import polars as pl
    import pyarrow as pa

    from tracelab.results.check import tool_overrides
    from tracelab.spark.tasks import results_schema

    run = pa.table({
        "run_id": [run_id], "suite": [suite.name], "suite_sha256": [suite.sha256],
        "started_at": pa.array([started], pa.timestamp("us", tz="UTC")),
        "elapsed_ms": pa.array([elapsed_ms], pa.int64()),
        "cases": pa.array([[case.id for case in result.cases]], pa.list_(pa.string())),
        "since_run": pa.array([since], pa.string()),
        "failed_cases": pa.array([[case.id for case in result.cases if not case.passed]], pa.list_(pa.string())),
        "tools": pa.array([tool_overrides(suite)], pa.list_(pa.struct([
            ("pattern", pa.string()), ("effect", pa.string()), ("regex", pa.string()), ("is_glob", pa.bool_())]))),
        "runs": pa.array([result.summary.runs], pa.int64()),
        "runs_failed": pa.array([result.runs_failed], pa.int64()),
    })
    tables = {"check_runs": run}
    for name, frame in result.view_rows.items():
        tables[name] = frame.select(pl.lit(run_id).alias("run_id"), *frame.columns).to_arrow()
    with writer_lock(layout):
        current = open_layout(layout.url, create=False)
        recover(current)
        commit(current, {"check_results": Change(parts, [])}, tables=tables,
               schemas={"check_results": results_schema()}, operation="check")


# --- ingest ------------------------------------------------------------------------------


@dataclass
class _Chunk:
    index: int
    files: list[tuple[str, str | None]]
    """(path or URL, why it is skipped or None), as `tracelab.ingest.pipeline.Input` says it."""


def ingest(store: str | os.PathLike[str], paths: Sequence[str | os.PathLike[str]], fmt: str = "auto", *,
           replace: bool = False, buckets: int | None = None, master: str | None = None,
           chunk_bytes: int = CHUNK_BYTES, wait: float = 0, target_file_size: int = TARGET_FILE_SIZE,
           progress: Callable[[str], None] | None = None) -> IngestReport:
    """Ingest files, folders or globs into a Delta store on Spark (docs/trace-format.md §5, §6 rules hold).

    Args:
        store: the store, a path, ``file://`` or object-store URL (created when missing; a folder
            written by `export` is adopted).
        paths: files, folders and globs; also URLs (`tracelab.spark.paths`).
        buckets: `ep_bucket` partitions of a new store (default 16, as `export`); recorded in it.
        chunk_bytes: target input bytes per task.
        wait: while another ingest writes the store, wait for it up to this many seconds.
        target_file_size: bytes per data file of each table (`--target-file-size`): the chunks'
            rows, and a bucket's smaller files already committed, are rewritten into files of this size.
        progress: called with one line per ingested wave.

    Raises:
        UsageError: no such path, a URL that cannot be read, or no file at all.
        Interrupted: Ctrl-C or SIGTERM; the store is as it was (one commit per ingest).
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
        return _ingest(layout, _chunks(inputs, chunk_bytes), len(inputs), fmt, replace, master, progress,
                       target_file_size)


def _ingest(layout: Layout, chunks: list[_Chunk], total: int, fmt: str, replace: bool, master: str | None,
            progress: Callable[[str], None] | None, target: int = TARGET_FILE_SIZE) -> IngestReport:
    """An ingest under the store's writer lock: the chunks' tasks stage their rows (in waves); one
    distributed join finds the episodes that collide; the driver re-ingests only the chunks
    that do; the tasks write each bucket's rows into files of the target size; one commit."""
    from tracelab.ingest.batches import IngestReport

    spark = session(master)
    wave = _parallelism(spark) * WAVE_TASKS
    snapshot = _Snapshot(layout)
    name = uuid.uuid4().hex[:16]
    started = time.perf_counter()
    TIMINGS.update(ingest_spark_s=0.0, ingest_commit_s=0.0, ingest_chunks=len(chunks))
    try:
        _clear_staging(snapshot)  # what a killed ingest staged: never committed
        outputs: dict[int, dict[str, Any]] = {}
        for start in range(0, len(chunks), wave):
            outputs.update(_run_wave(spark, snapshot, chunks[start:start + wave], fmt, replace, name))
            if progress is not None:
                progress(f"ingested {sum(len(c.files) for c in chunks[:start + wave])} of {total} files")
        report = IngestReport()
        for output in _take(spark, snapshot, chunks, outputs, fmt, replace, name):
            report.files.extend(_file_reports(output))
        groups = _compact(spark, snapshot, target, name)
        commit(layout, snapshot.changes)
        _clear_staged(spark, snapshot, groups, name)
    except BaseException as exc:  # Ctrl-C, or Py4J's error wrapping it while Java ran
        if not is_interrupt(exc):
            raise
        raise Interrupted(f"interrupted: nothing was committed to {layout.url}; the store is as it was "
                          "(run the same ingest again)") from None
    TIMINGS["ingest_commit_s"] = time.perf_counter() - started - TIMINGS["ingest_spark_s"]
    TIMINGS["ingest_files"] = {t: len(snapshot.table_files(t)) for t in sorted(snapshot.files)}
    return report


def _file_reports(output: dict[str, Any]) -> list[Any]:
    from tracelab.ingest.batches import FileReport

    return [FileReport(**f) for f in output["files"]]


def _spark_job(run: Callable[[], Any]) -> Any:
    """Run a Spark job, its time counted as the tasks' (`TIMINGS["ingest_spark_s"]`)."""
    clock = time.perf_counter()
    try:
        return run()
    finally:
        TIMINGS["ingest_spark_s"] = TIMINGS.get("ingest_spark_s", 0.0) + time.perf_counter() - clock


def _clear_staged(spark: Any, snapshot: _Snapshot, groups: list[list[dict[str, Any]]], name: str) -> None:
    """Remove what this ingest staged, once committed: the files in tasks, one per group of
    `_compact` (their number grows with the chunks), then the folders left."""
    import pyarrow as pa

    from tracelab.spark.tasks import clear_staged

    if groups:
        url = snapshot.layout.url
        groups = [[{"table": p["table"], "bucket": p["bucket"]} for p in group] for group in groups]

        def body(batches):  # type: ignore[no-untyped-def]
            return clear_staged(batches, url, groups, [name, f"{name}-redo"])

        frame = spark.range(0, len(groups), 1, numPartitions=len(groups))
        schema = _spark_schema(pa.schema([("group", pa.int64()), ("done", pa.int64())]))
        _spark_job(lambda: _collect(frame.mapInArrow(body, schema)))
    _clear_staging(snapshot)


def _clear_staging(snapshot: _Snapshot) -> None:
    """Remove every table's staging folder (`tasks.STAGING`): files no commit names (after a killed
    ingest; else only the folders `_clear_staged` emptied)."""
    from tracelab.spark.tasks import STAGING

    for table in PARTITIONED + FLAT:
        try:
            snapshot.fs.delete_dir(f"{snapshot.base}/{table}/{STAGING}")
        except (OSError, FileNotFoundError):
            pass  # nothing staged


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


def _run_wave(spark: Any, snapshot: _Snapshot, chunks: list[_Chunk], fmt: str, replace: bool,
              name: str) -> dict[int, dict[str, Any]]:
    """Ingest a wave of chunks on Spark, each staged apart; their outputs by chunk."""
    import pyarrow as pa

    from tracelab.spark.tasks import ingest_chunks

    known = snapshot.known_sources()
    url, buckets = snapshot.layout.url, snapshot.layout.buckets
    files = {c.index: c.files for c in chunks}

    def body(batches):  # type: ignore[no-untyped-def]
        return ingest_chunks(batches, files, fmt, replace, url, name, buckets, known)

    # one task per chunk, numbered: no data to shuffle (the chunks' file lists travel with `body`)
    first = chunks[0].index
    frame = spark.range(first, first + len(chunks), 1, numPartitions=len(chunks))
    out_schema = _spark_schema(pa.schema([("chunk", pa.int64()), ("output", pa.string())]))
    result = _spark_job(lambda: _collect(frame.mapInArrow(body, out_schema)))
    return {row["chunk"]: json.loads(row["output"]) for row in result.to_pylist()}


def _take(spark: Any, snapshot: _Snapshot, chunks: list[_Chunk], outputs: dict[int, dict[str, Any]], fmt: str,
          replace: bool, name: str) -> list[dict[str, Any]]:
    """Take the chunks into the snapshot in order, each as the DuckDB engine would ingest its files
    after the earlier ones: a chunk none of whose episodes (nor, without `replace`, file contents)
    was there before is taken as it is; the others are ingested again on the driver, seeded with
    the episodes they collide with. The collisions come from one distributed join (`_collisions`):
    the driver's work grows with the colliding chunks, not with the runs. Their outputs, in order."""
    ids = _collisions(spark, snapshot, outputs)
    holder = {eid: digest for eid, digest, origin in ids if origin < 0}
    mine: dict[int, dict[str, str]] = {}
    for eid, digest, origin in ids:
        if origin >= 0:
            mine.setdefault(origin, {})[eid] = digest
    seen: set[str] = set()
    taken = []
    for chunk in chunks:
        output, colliding = outputs[chunk.index], mine.get(chunk.index, {})
        seeds = [(eid, holder[eid]) for eid in sorted(colliding) if eid in holder]
        known = not replace and any(digest in seen for _, digest in output["sources"])
        stored = set(colliding)
        if seeds or known:
            output = _redo(snapshot, chunk, seeds, fmt, replace, name)
            stored = stored & set(output["episodes"])
        holder.update((eid, colliding[eid]) for eid in stored)
        seen.update(digest for _, digest in output["sources"])
        if replace:
            _forget_sources(_Rewrites(snapshot, chunk.index), output["sources"])
        for part in output["parts"]:
            snapshot.add(part)
        taken.append(output)
    return taken


def _collisions(spark: Any, snapshot: _Snapshot, outputs: dict[int, dict[str, Any]]) -> list[tuple[str, str, int]]:
    """(episode_id, content_hash, origin) of the episode ids staged by more than one chunk or
    already in the store (origin -1), found by one Spark task per `ep_bucket` that holds staged
    episodes (`tasks.find_collisions`)."""
    from tracelab.spark.tasks import collision_schema, find_collisions

    staged: dict[int, list[tuple[str, int]]] = {}
    for chunk, output in sorted(outputs.items()):
        for part in output["parts"]:
            if part["table"] == "episodes":
                staged.setdefault(part["bucket"], []).append((part["path"], chunk))
    if not staged:
        return []
    stored: dict[int, list[str]] = {}
    for path, bucket in snapshot.table_files("episodes").items():
        stored.setdefault(bucket if bucket is not None else -1, []).append(path)
    buckets = sorted(staged)
    groups = {i: (stored.get(b, []), staged[b]) for i, b in enumerate(buckets)}
    url = snapshot.layout.url

    def body(batches):  # type: ignore[no-untyped-def]
        return find_collisions(batches, url, groups)

    frame = spark.range(0, len(buckets), 1, numPartitions=len(buckets))
    found = _spark_job(lambda: _collect(frame.mapInArrow(body, _spark_schema(collision_schema()))))
    return [(r["episode_id"], r["content_hash"], r["origin"]) for r in found.to_pylist()]


def _redo(snapshot: _Snapshot, chunk: _Chunk, seeds: list[tuple[str, str]], fmt: str, replace: bool,
          name: str) -> dict[str, Any]:
    """Ingest a chunk again on the driver, seeded with the episodes it collides with and the
    snapshot's sources, so that skip / conflict / `--replace` decide as in one DuckDB store; its output."""
    from tracelab.spark.tasks import ingest_chunk

    redo = ingest_chunk(chunk.index, chunk.files, fmt, replace, snapshot.layout.url, f"{name}-redo",
                        snapshot.layout.buckets, snapshot.known_sources(), seeds)
    rewrites = _Rewrites(snapshot, chunk.index)
    for table in PARTITIONED:  # --replace: the stored rows of the episodes it replaced go
        rewrites.drop(table, "episode_id IN (SELECT unnest($ids))", {"ids": redo.replaced})
    return dataclasses.asdict(redo)


def _compact(spark: Any, snapshot: _Snapshot, target: int, name: str) -> list[list[dict[str, Any]]]:
    """Write each bucket's new rows, with its committed files smaller than `target`, into files of
    about `target` bytes (`tasks.compact_groups`: one task per bucket, one for the unpartitioned
    tables), and put those in the snapshot in their place: a table's bucket then holds
    ceil(its bytes / target) files whatever the number of chunks and ingests. The groups, one per task."""
    import pyarrow as pa

    from tracelab.spark.tasks import compact_groups

    pieces: dict[int | None, list[dict[str, Any]]] = {}
    consumed: set[tuple[str, str]] = set()
    for table, change in sorted(snapshot.changes.items()):
        new: dict[int | None, list[str]] = {}
        for part in change.adds:
            new.setdefault(part["bucket"], []).append(part["path"])
        for bucket, paths in new.items():
            small = [p for p, b in snapshot.table_files(table).items()
                     if b == bucket and p not in paths and snapshot.sizes[table].get(p, target) < target]
            consumed.update((table, p) for p in small)
            pieces.setdefault(bucket, []).append({"table": table, "bucket": bucket, "inputs": small + paths})
    if not pieces:
        return []
    groups = [pieces[b] for b in sorted(pieces, key=lambda b: -1 if b is None else b)]
    url = snapshot.layout.url

    def body(batches):  # type: ignore[no-untyped-def]
        return compact_groups(batches, url, groups, target, name)

    frame = spark.range(0, len(groups), 1, numPartitions=len(groups))
    schema = _spark_schema(pa.schema([("group", pa.int64()), ("output", pa.string())]))
    written = _spark_job(lambda: _collect(frame.mapInArrow(body, schema)))
    for group in groups:
        for piece in group:  # staged, never committed: they leave the change
            snapshot.forget(piece["table"], {p for p in piece["inputs"] if (piece["table"], p) not in consumed})
    for table, path in sorted(consumed):
        snapshot.remove(table, path)
    for row in written.to_pylist():
        for part in json.loads(row["output"]):
            snapshot.add(part)
    return groups


class _Snapshot:
    """The store as this ingest sees it: the files of its committed tables, plus the files this
    ingest added and removed so far (`changes`, committed at its end)."""

    def __init__(self, layout: Layout) -> None:
        from tracelab.spark.paths import store_filesystem

        self.layout = layout
        self.fs, self.base = store_filesystem(layout.url)
        self.files: dict[str, dict[str, int | None]] = {}
        self.sizes: dict[str, dict[str, int]] = {}
        """Bytes of each committed file, by table."""
        self.schemas: dict[str, Any] = {}
        self.changes: dict[str, Change] = {}

    def table_files(self, table: str) -> dict[str, int | None]:
        """{path relative to the table: its ep_bucket or None}, in the snapshot."""
        if table not in self.files:
            import pyarrow as pa
            from deltalake import DeltaTable

            delta = DeltaTable(self.layout.table(table), version=self.layout.versions[table])
            actions = pa.table(delta.get_add_actions(flatten=True))
            buckets = (actions.column("partition.ep_bucket").to_pylist() if "partition.ep_bucket" in
                       actions.column_names else [None] * actions.num_rows)
            self.files[table] = dict(zip(actions.column("path").to_pylist(), buckets, strict=True))
            self.sizes[table] = dict(zip(actions.column("path").to_pylist(), actions.column("size_bytes").to_pylist(),
                                         strict=True))
            schema = delta.to_pyarrow_dataset().schema
            self.schemas[table] = schema.remove(schema.get_field_index("ep_bucket")) \
                if "ep_bucket" in schema.names else schema
        return self.files[table]

    def add(self, part: dict[str, Any]) -> None:
        self.table_files(part["table"])[part["path"]] = part["bucket"]
        self.changes.setdefault(part["table"], Change([], [])).adds.append(part)

    def remove(self, table: str, path: str) -> None:
        del self.table_files(table)[path]
        change = self.changes.setdefault(table, Change([], []))
        added = [a for a in change.adds if a["path"] == path]
        if added:  # written by this ingest: never committed, so nothing to remove
            change.adds.remove(added[0])
        else:
            change.removes.append(path)

    def forget(self, table: str, paths: set[str]) -> None:
        """Take files this ingest added out of the snapshot (in one pass over its adds)."""
        files = self.table_files(table)
        for path in paths:
            del files[path]
        change = self.changes[table]
        change.adds = [a for a in change.adds if a["path"] not in paths]

    def location(self, table: str, path: str) -> str:
        return f"{self.base}/{table}/{path}"

    def dataset(self, table: str) -> Any:
        """The table's rows in the snapshot, as a pyarrow dataset (the partition column left out)."""
        import pyarrow.dataset as ds

        paths = [self.location(table, p) for p in sorted(self.table_files(table))]
        return ds.dataset(paths, schema=self.schemas[table], format="parquet", filesystem=self.fs)

    def known_sources(self) -> Any:
        """The snapshot's `sources` rows (`tasks.SOURCE_COLUMNS`) as Arrow: every task is seeded with them."""
        from tracelab.spark.tasks import SOURCE_COLUMNS

        con = self.connect()
        try:
            return con.sql(f"SELECT {', '.join(SOURCE_COLUMNS)} FROM sources").to_arrow_table()
        finally:
            con.close()

    def connect(self) -> Any:
        """A DuckDB connection with views `episodes` (id and hash) and `sources` over the snapshot:
        the driver's lookups need those columns, not the whole store's views."""
        import duckdb

        from tracelab.spark.tasks import SOURCE_COLUMNS

        con = duckdb.connect()
        try:
            con.register("_episodes", self.dataset("episodes"))
            con.execute("CREATE VIEW episodes AS SELECT episode_id, content_hash FROM _episodes")
            sources = self.dataset("sources")
            con.register("_sources", sources)
            # an export made before `sources` recorded file size and time: NULL, as the store reads it
            columns = ", ".join(c if c in sources.schema.names else f"NULL::BIGINT AS {c}" for c in SOURCE_COLUMNS)
            con.execute(f"CREATE VIEW sources AS SELECT {columns} FROM _sources")
        except duckdb.Error as exc:
            con.close()
            raise StoreError(f"{self.layout.url}: the store cannot be read ({exc})") from None
        return con


def _forget_sources(rewrites: _Rewrites, staged: list[list[str]]) -> None:
    """--replace read recorded files again: their earlier `sources` rows and the quarantine rows
    of those reads make way for the new ones (the store-wide half of sql/ingest/forget_source.sql)."""
    if not staged:
        return
    stored = rewrites.snapshot.connect()
    try:
        recorded = {tuple(r) for r in stored.execute(
            "SELECT source_uri, content_hash FROM sources WHERE content_hash IN (SELECT unnest(?))",
            [[h for _, h in staged]]).fetchall()}
    finally:
        stored.close()
    uris = [uri for uri, digest in staged if (uri, digest) in recorded]
    rewrites.drop("quarantine", "source_uri IN (SELECT unnest($uris))", {"uris": uris})
    rewrites.drop("sources", "content_hash IN (SELECT unnest($hashes))", {"hashes": [h for _, h in staged]})


class _Rewrites:
    """Stored files rewritten without some rows: the new file added, the old one removed, in the snapshot."""

    def __init__(self, snapshot: _Snapshot, chunk: int) -> None:
        self.snapshot = snapshot
        self.chunk = chunk

    def drop(self, table: str, where: str, params: dict[str, Any]) -> None:
        """Rewrite the files of `table` holding rows that match `where` (bound `params`) without them."""
        import tempfile

        import duckdb
        import pyarrow.parquet as pq

        from tracelab.spark.paths import put_file

        if not any(params.values()):
            return
        snapshot = self.snapshot
        with duckdb.connect() as con, tempfile.TemporaryDirectory(prefix="tracelab-rewrite-") as tmp:
            for path, bucket in sorted(snapshot.table_files(table).items()):
                con.register("_file", pq.read_table(snapshot.location(table, path), filesystem=snapshot.fs,
                                                    partitioning=None))
                hits = con.execute(f"SELECT count(*) FROM _file WHERE {where}", params).fetchall()[0][0]
                if hits:
                    folder, _, stem = path.rpartition("/")
                    new = f"{folder + '/' if folder else ''}{stem.removesuffix('.parquet')}-r{self.chunk:06d}" \
                          f"{uuid.uuid4().hex[:6]}.parquet"
                    local = Path(tmp) / "rewritten.parquet"
                    con.execute(f"COPY (SELECT * FROM _file WHERE NOT ({where})) TO {path_literal(local)} "
                                "(FORMAT parquet)", params)
                    put_file(local, snapshot.fs, snapshot.location(table, new))
                    snapshot.remove(table, path)
                    snapshot.add({"table": table, "path": new, "size": local.stat().st_size, "bucket": bucket,
                                  "rows": pq.ParquetFile(local).metadata.num_rows})
                con.unregister("_file")
