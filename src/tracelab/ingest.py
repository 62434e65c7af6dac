"""Files -> adapters -> tables: quarantine, idempotency, atomicity per file.

Adapters turn each file into native episode dicts (formats/base.py). Python
does per record only what SQL cannot (docs/duckdb-notes.md §1, §4): strict parsing
happened in the adapter; here each record gets its canonical hash, its
unlisted keys moved under ``meta.extra`` and its JSON-string args parsed
strictly. Everything else — validation, typing, pairing, effects,
de-duplication — runs as SQL over the whole batch (sql/ingest/), while a
thread parses the next batch.

Each file is one transaction on the store's connection. Batches are staged on
a second connection that commits every statement, and only the rows to write
cross over, as Arrow: inside a transaction DuckDB keeps every replaced TEMP
table (and every registered view) until commit, so staging inside the file's
transaction would hold all of a large file's batches in memory at once.
"""
from __future__ import annotations

import gc
import glob
import hashlib
import os
import queue
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import duckdb

from tracelab.bulk_insert import insert_arrow
from tracelab.errors import DataError, StoreError, UsageError
from tracelab.formats import all_formats, get_format
from tracelab.formats.base import RAW_LIMIT, Adapter, BadJSON, Quarantined, Source, dump_json, parse_json
from tracelab.native_keys import EPISODE_KEYS, STEP_KEYS
from tracelab.pairing import pair_steps
from tracelab.sqlfiles import load_sql, run_script

BATCH_RECORDS = 20_000
BATCH_BYTES = 64 << 20
VECTOR_ROWS = 2048  # DuckDB's vector size
VECTOR_BYTES = 16 << 20
"""No DuckDB vector of a batch (`VECTOR_ROWS` consecutive records) holds more record bytes than
this, and a larger record is quarantined: DuckDB's JSON functions need many times a vector's
bytes at once (at the default 1 GB limit, 32 records of 1 MB in one vector run out of memory)."""
CHUNK_RECORDS = 4 * VECTOR_ROWS
"""Records per Arrow chunk of a batch: DuckDB scans one chunk per thread (a chunk of whole
vectors, so that `VECTOR_BYTES` still bounds each vector)."""

@dataclass
class FileReport:
    """What one input file contributed."""

    path: str
    format: str | None = None
    added: int = 0
    skipped: int = 0
    quarantined: int = 0
    status: str = "loaded"
    """loaded | already-ingested | not-a-trace | failed"""
    message: str | None = None


@dataclass
class IngestReport:
    """Totals over all inputs, and one `FileReport` per file."""

    files: list[FileReport] = field(default_factory=list)

    @property
    def added(self) -> int:
        return sum(f.added for f in self.files)

    @property
    def skipped(self) -> int:
        """Episodes skipped as duplicates, plus those of files already ingested."""
        return sum(f.skipped for f in self.files)

    @property
    def quarantined(self) -> int:
        return sum(f.quarantined for f in self.files)

    @property
    def failed(self) -> list[FileReport]:
        return [f for f in self.files if f.status == "failed"]

    def count(self, status: str) -> int:
        return sum(1 for f in self.files if f.status == status)


# --- inputs ------------------------------------------------------------------------------


def expand_paths(paths: Sequence[str | os.PathLike[str]]) -> list[Path]:
    """Files, folders (recursively, in code-point order of relative paths) and globs, in order."""
    out: list[Path] = []
    for raw in paths:
        text = os.fspath(raw)
        path = Path(text)
        if path.is_dir():
            found = [p for p in path.rglob("*") if p.is_file()]
            found.sort(key=lambda p: p.relative_to(path).as_posix())
            out.extend(found)
        elif path.is_file():
            out.append(path)
        elif glob.has_magic(text):
            matches = sorted(glob.glob(text, recursive=True))
            files = [Path(m) for m in matches if Path(m).is_file()]
            if not files:
                raise UsageError(f"{text}: the pattern matches no file")
            out.extend(files)
        else:
            raise UsageError(f"{text}: no such file or folder")
    return out


def detect_format(source: Source, candidates: Iterable[Adapter] | None = None) -> Adapter | None:
    """The first format, in registry order, that claims the file; None when none does."""
    for module in candidates if candidates is not None else all_formats():
        if module.claims(source):
            return module
    return None


# --- per-record preparation ---------------------------------------------------------------


@dataclass(frozen=True)
class Prepared:
    """One record as SQL reads it (sql/ingest/stage.sql), and its canonical JSON."""

    head: bytes
    """The record without `steps` and `tools`, as JSON: unlisted keys under ``meta.extra``."""
    steps: bytes | None
    """`steps` as JSON, its steps' unlisted keys under ``meta.extra`` and JSON-string args
    parsed; None when absent or null."""
    n_steps: int | None
    """How many steps; None when `steps` is not an array."""
    tools: bytes | None
    """`tools` as JSON; None when absent or null."""
    canonical: bytes
    """Keys sorted by code point, compact: what `content_hash` hashes and a quarantined record keeps."""

    @property
    def size(self) -> int:
        return len(self.head) + len(self.steps or b"") + len(self.tools or b"")


def prepare(record: dict[str, Any]) -> Prepared:
    """The record split into the three documents SQL reads, plus its canonical JSON (docs/trace-format.md §5).

    Steps and tools travel apart from the rest, so that SQL parses each part once. The
    documents keep recorded key order; unlisted keys move under ``meta.extra`` and
    JSON-string args are parsed strictly. The input is never mutated.
    """
    canonical = dump_json(record, sort_keys=True)
    doc = record
    if not record.keys() <= EPISODE_KEYS:
        doc = _with_extra(record, EPISODE_KEYS)
    steps = doc.get("steps")
    # In compact JSON a key "args" with a string value reads `"args":"` (inside a string every
    # quote is escaped): without those bytes, and without unlisted step keys, no step changes.
    if isinstance(steps, list) and (_STRING_ARGS in canonical or not _steps_listed_only(steps)):
        steps = [_prepare_step(s) if isinstance(s, dict) else s for s in steps]
    tools = doc.get("tools")
    head = {k: v for k, v in doc.items() if k != "steps" and k != "tools"}
    return Prepared(
        head=dump_json(head),
        steps=None if steps is None else dump_json(steps),
        n_steps=len(steps) if isinstance(steps, list) else None,
        tools=None if tools is None else dump_json(tools),
        canonical=canonical,
    )


_STRING_ARGS = b'"args":"'


def _steps_listed_only(steps: list[Any]) -> bool:
    """True when every step is an object of a known kind with only the keys that kind lists."""
    try:
        for step in steps:
            if not step.keys() <= STEP_KEYS[step["kind"]]:
                return False
    except (AttributeError, KeyError, TypeError):  # not an object, or no (known) kind
        return False
    return True


def _listed_keys(step: dict[str, Any]) -> frozenset[str] | None:
    """The keys the step's kind lists; None for a kind outside §2 (quarantined anyway)."""
    kind = step.get("kind")
    return STEP_KEYS.get(kind) if isinstance(kind, str) else None


def _prepare_step(step: dict[str, Any]) -> dict[str, Any]:
    allowed = _listed_keys(step)
    out = step
    if allowed is not None and not step.keys() <= allowed:
        out = _with_extra(step, allowed)
    args = out.get("args")
    if isinstance(args, str) and out.get("kind") in ("tool_call", "confirmation"):
        out = dict(out) if out is step else out
        try:
            out["args"] = parse_json(args)
            out["_tl_args_text"] = args
        except BadJSON:
            out["_tl_args_bad"] = True
    return out


def _with_extra(obj: dict[str, Any], allowed: frozenset[str]) -> dict[str, Any]:
    """A copy of `obj` with its keys outside `allowed` moved under ``meta.extra``."""
    meta = obj.get("meta")
    if meta is not None and not isinstance(meta, dict):
        return obj  # quarantined for its meta anyway; keep the record as it came
    out = {k: v for k, v in obj.items() if k in allowed}
    extra = {k: v for k, v in obj.items() if k not in allowed}
    new_meta = dict(meta or {})
    old = new_meta.get("extra")
    new_meta["extra"] = {**old, **extra} if isinstance(old, dict) else extra
    out["meta"] = new_meta
    return out


def _raw_text(raw: str | bytes | None) -> str | None:
    if raw is None:
        return None
    if isinstance(raw, bytes):
        raw = raw[:RAW_LIMIT].decode("utf-8", errors="backslashreplace")
    return raw[:RAW_LIMIT]


# --- the SQL side ---------------------------------------------------------------------------


class _FileLoader:
    """Loads one file inside the caller's transaction, batch by batch.

    The batch is staged on `scratch`, a second connection that commits each statement: inside
    the file's transaction, a replaced TEMP table (or a registered view) keeps its memory until
    commit, so staging there would hold every batch of the file at once. The rows to write are
    handed to `con`, whose transaction spans the file, as Arrow.
    """

    def __init__(self, con: duckdb.DuckDBPyConnection, scratch: duckdb.DuckDBPyConnection,
                 source: Source, fmt: str, replace: bool, ingested_at: datetime) -> None:
        self.con = con
        self.scratch = scratch
        self.source = source
        self.replace = replace
        self.params = {"source_format": fmt, "source_uri": source.uri, "ingested_at": ingested_at}
        self.report = FileReport(source.uri, fmt)

    def load(self, items: Iterator[tuple[int, dict[str, Any]] | Quarantined]) -> FileReport:
        """Stage and write every batch; parsing the next batch overlaps SQL on this one."""
        run_script(self.scratch, "ingest/file_seen")
        for batch in _in_background(_batches(items)):
            rejected = list(batch.quarantine)
            if batch.lines:
                rejected.extend(self._load_batch(batch))
            if rejected:
                rejected.sort(key=lambda q: q[0])
                insert_arrow(self.con, "quarantine", {
                    "source_uri": [self.source.uri] * len(rejected),
                    "line": [q[0] for q in rejected],
                    "reason": [q[1] for q in rejected],
                    "raw": [q[2] for q in rejected],
                    "ingested_at": [self.params["ingested_at"]] * len(rejected),
                })
                self.report.quarantined += len(rejected)
        return self.report

    def _load_batch(self, batch: _Batch) -> list[tuple[int, str, str | None]]:
        scratch = self.scratch
        scratch.register("stage_raw", batch.table)
        run_script(scratch, "ingest/stage")
        scratch.unregister("stage_raw")
        run_script(scratch, "ingest/decide", {"replace": self.replace})
        rejected = []
        replaced = []
        decisions = scratch.execute(
            "SELECT line, eid, action, reason, first_line FROM stage_decide WHERE action <> 'add'"
        ).fetchall()
        for line, eid, action, reason, first_line in decisions:
            raw = _raw_text(batch.canonical[line])
            if action == "bad":
                rejected.append((line, reason, raw))
            elif action == "skip":
                self.report.skipped += 1
            elif action == "conflict":
                rejected.append((line, f"episode_id {eid!r} is already stored with different content "
                                 "(use --replace to replace it)", raw))
            elif action == "conflict_file":
                rejected.append((line, f"episode_id {eid!r} appears earlier in this file "
                                 f"(line {first_line}) with different content", raw))
            elif action == "replace":
                replaced.append(eid)
        if replaced:
            run_script(self.con, "ingest/replace", {"replaced": replaced})
        run_script(scratch, "ingest/pairs")
        self._pair_sequentially()
        for table in ROW_TABLES:
            statement, params = _bound(f"ingest/rows/{table}", self.params)
            rows = scratch.sql(statement, params=params).to_arrow_table()
            self.con.register(f"batch_{table}", _read_once(rows))
            del rows  # the stream alone holds the batches now
        run_script(self.con, "ingest/insert", self.params)
        for table in ROW_TABLES:
            self.con.unregister(f"batch_{table}")
        self.report.added += scratch.execute("SELECT count(*) FROM stage_keep").fetchall()[0][0]
        return rejected

    def _pair_sequentially(self) -> None:
        columns = self.scratch.table("stage_cr").to_arrow_table().to_pydict()
        lines = columns["line"]
        out_line: list[int] = []
        out_call: list[int] = []
        out_result: list[int] = []
        start = 0
        while start < len(lines):
            end = start
            while end < len(lines) and lines[end] == lines[start]:
                end += 1
            steps = zip(columns["idx"][start:end], columns["kind"][start:end],
                        columns["name"][start:end], columns["call_id"][start:end], strict=True)
            for call_idx, result_idx in pair_steps(steps):
                out_line.append(lines[start])
                out_call.append(call_idx)
                out_result.append(result_idx)
            start = end
        if out_line:
            insert_arrow(self.scratch, "stage_pairs",
                         {"line": out_line, "call_idx": out_call, "result_idx": out_result})


ROW_TABLES = ("episodes", "steps", "tool_calls", "tool_definitions")
"""The tables a batch writes, each from `sql/ingest/rows/<table>.sql`."""


def _bound(name: str, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The statement of `sql/<name>.sql` and the named parameters it uses."""
    statement = load_sql(name)
    return statement, {k: v for k, v in params.items() if f"${k}" in statement}


def _read_once(table: Any) -> Any:
    """`table` as a stream whose batches are dropped as they are read.

    A view registered inside the file's transaction lives until commit, and so does what it
    holds: a stream that has been read holds nothing.
    """
    import pyarrow as pa

    batches = table.to_batches()

    def drain() -> Iterator[Any]:
        while batches:
            yield batches.pop(0)

    return pa.RecordBatchReader.from_batches(table.schema, drain())


@dataclass
class _Batch:
    """Prepared records of one batch, plus the adapter's quarantined ones."""

    lines: list[int] = field(default_factory=list)
    records: list[Prepared] = field(default_factory=list)
    canonical: dict[int, bytes] = field(default_factory=dict)
    quarantine: list[tuple[int, str, str | None]] = field(default_factory=list)
    size: int = 0
    vector_size: int = 0
    """Bytes of the records in the batch's last (partial) DuckDB vector."""
    table: Any = None
    """The records as Arrow (`sealed`), in chunks: DuckDB scans one chunk per thread."""

    def sealed(self) -> _Batch:
        """The batch with its Arrow table built (in the parsing thread) and its records dropped."""
        import pyarrow as pa

        records = self.records
        table = pa.table({
            "line": pa.array(self.lines, pa.int64()),
            "doc": pa.array([r.head for r in records], pa.string()),
            "steps": pa.array([r.steps for r in records], pa.string()),
            "n_steps": pa.array([r.n_steps for r in records], pa.int32()),
            "tools": pa.array([r.tools for r in records], pa.string()),
            "hash": pa.array([hashlib.sha256(r.canonical).hexdigest() for r in records], pa.string()),
        })
        self.table = pa.Table.from_batches(table.to_batches(max_chunksize=CHUNK_RECORDS), table.schema)
        self.records = []
        return self


def _batches(items: Iterator[tuple[int, dict[str, Any]] | Quarantined]) -> Iterator[_Batch]:
    batch = _Batch()
    for item in items:
        if isinstance(item, Quarantined):
            batch.quarantine.append((item.line, item.reason, _raw_text(item.raw)))
            continue
        line, record = item
        try:
            prepared = prepare(record)
        except TypeError as exc:  # orjson.JSONEncodeError included
            batch.quarantine.append((line, f"cannot be serialised: {exc}", None))
            continue
        size = prepared.size
        if len(prepared.canonical) > VECTOR_BYTES:
            batch.quarantine.append((line, f"the record is {len(prepared.canonical):,} bytes of JSON; records over "
                                     f"{VECTOR_BYTES >> 20} MiB are not loaded",
                                     _raw_text(prepared.canonical)))
            continue
        if len(batch.lines) % VECTOR_ROWS == 0:
            batch.vector_size = 0
        if batch.vector_size + size > VECTOR_BYTES:
            yield batch.sealed()
            batch = _Batch()
        batch.lines.append(line)
        batch.records.append(prepared)
        batch.canonical[line] = prepared.canonical
        batch.size += size
        batch.vector_size += size
        if len(batch.lines) >= BATCH_RECORDS or batch.size >= BATCH_BYTES:
            yield batch.sealed()
            batch = _Batch()
    yield batch.sealed()


def _in_background(batches: Iterator[_Batch]) -> Iterator[_Batch]:
    """Produce batches in a thread, one ahead: DuckDB releases the GIL while it runs SQL."""
    slots: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=1)
    stop = threading.Event()

    def produce() -> None:
        try:
            for batch in batches:
                while not stop.is_set():
                    try:
                        slots.put(("batch", batch), timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            slots.put(("done", None))
        except BaseException as exc:  # handed to the consumer, raised there
            slots.put(("error", exc))

    worker = threading.Thread(target=produce, name="tracelab-parse", daemon=True)
    worker.start()
    try:
        while True:
            kind, value = slots.get()
            if kind == "done":
                return
            if kind == "error":
                raise value
            yield value
    finally:
        stop.set()
        while worker.is_alive():
            try:
                slots.get_nowait()
            except queue.Empty:
                worker.join(timeout=0.05)


def ingest_paths(
    con: duckdb.DuckDBPyConnection,
    paths: Sequence[str | os.PathLike[str]],
    *,
    format: str = "auto",
    replace: bool = False,
    progress: Callable[[FileReport, int], None] | None = None,
) -> IngestReport:
    """Ingest files, folders and globs into the store behind `con`, one transaction per file.

    Args:
        con: a read-write connection to a bootstrapped store.
        paths: files, folders (read recursively) and glob patterns.
        format: ``auto`` or a format name (`tracelab formats`).
        replace: replace stored episodes whose content differs, instead of quarantining.
        progress: called after each file with its report and its size in bytes.

    Returns:
        The per-file reports. A file that cannot be read to its end is rolled back
        and reported with status ``failed``; the other files still load.
    """
    files = expand_paths(paths)
    forced = None if format == "auto" else get_format(format)
    candidates = all_formats()
    report = IngestReport()
    with _staging_connection(con) as scratch, _collector_paused():
        for path in files:
            source = Source(path)
            file_report = _ingest_one(con, scratch, source, forced, candidates, replace)
            report.files.append(file_report)
            if progress is not None:
                progress(file_report, source.size)
    return report


@contextmanager
def _collector_paused() -> Iterator[None]:
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
def _staging_connection(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """A second connection to the store for staging batches (see `_FileLoader`)."""
    scratch = con.cursor()
    try:
        # it reads timestamps without an offset as the store's connection does
        zone = con.execute("SELECT current_setting('TimeZone')").fetchall()[0][0]
        scratch.execute("SET TimeZone = ?", [zone])
        run_script(scratch, "ingest/macros")
        yield scratch
    finally:
        scratch.close()


def _ingest_one(con: duckdb.DuckDBPyConnection, scratch: duckdb.DuckDBPyConnection, source: Source,
                forced: Adapter | None, candidates: list[Adapter], replace: bool) -> FileReport:
    try:
        known = con.execute(
            "SELECT format, episodes FROM sources WHERE content_hash = ? LIMIT 1",
            [source.content_hash],
        ).fetchall()
        if known:
            return FileReport(source.uri, known[0][0], skipped=known[0][1],
                              status="already-ingested")
        module = forced or detect_format(source, candidates)
    except DataError as exc:
        return FileReport(source.uri, status="failed", message=str(exc))
    except OSError as exc:
        return FileReport(source.uri, status="failed", message=f"{source.uri}: {exc.strerror or exc}")
    if module is None:
        tried = ", ".join(m.name for m in candidates)
        return FileReport(source.uri, status="not-a-trace",
                          message=f"{source.uri}: no format claims this file (tried {tried})")
    ingested_at = datetime.now(timezone.utc)
    con.begin()
    try:
        loader = _FileLoader(con, scratch, source, module.name, replace, ingested_at)
        file_report = loader.load(module.episodes(source))
        con.execute(
            "INSERT INTO sources VALUES (?, ?, ?, ?, ?, ?)",
            [source.uri, source.content_hash, module.name, file_report.added,
             file_report.quarantined, ingested_at],
        )
        con.commit()
        return file_report
    except DataError as exc:
        _rollback(con)
        return FileReport(source.uri, module.name, status="failed", message=str(exc))
    except duckdb.Error as exc:
        # The store refused a write (a full disk, a file size limit): this file is rolled
        # back, the files before it stay committed, and the rest are not attempted.
        _rollback(con)
        reason = str(exc).strip().splitlines()[0]
        raise StoreError(f"{source.uri}: not loaded, the store could not be written ({reason}); "
                         "the files before it are stored") from None
    except BaseException:
        _rollback(con)
        raise


def _rollback(con: duckdb.DuckDBPyConnection) -> None:
    """Roll back the file's transaction, unless a failed commit (or a fatal error) already ended it."""
    try:
        con.rollback()
    except duckdb.Error:
        pass
