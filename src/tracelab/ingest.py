"""Files -> adapters -> tables: quarantine, idempotency, atomicity per file.

Adapters turn each file into native episode dicts (formats/base.py). Python
does per record only what SQL cannot (docs/duckdb-notes.md §1, §4): strict parsing
happened in the adapter; here each record gets its canonical hash, its
unlisted keys moved under ``meta.extra`` and its JSON-string args parsed
strictly. Everything else — validation, typing, pairing, effects,
de-duplication — runs as SQL over the whole batch (sql/ingest/), while a
thread reads, hashes and parses the next files.

Fixed costs are paid per batch, not per file (docs/trace-format.md §6: per-file atomicity is about
files, not transactions). A small file is read whole and parsed before any of its records is
staged, so that a file that cannot be read never touches a transaction; whole small files then
share batches and one transaction per batch, with their `sources` rows. A file too large to hold
(`Source.in_memory`, `BATCH_BYTES`) streams through its own transaction, batch by batch. A
kill leaves every file wholly loaded with its `sources` row, or not at all.

Batches are staged on a second connection that commits every statement, and only the rows to
write cross over, as Arrow: inside a transaction DuckDB keeps every replaced TEMP table (and
every registered view) until commit, so staging inside the transaction would hold all of a
large file's batches in memory at once.

A batch's steps, the bulk of its staging, are staged ahead in the reading thread (`_Stager`), into
a schema of their own in an in-memory database attached for the ingest: the writer finds them
there (no copy) while the reader parses and stages the next batch, so that the two threads share
the work instead of the writer doing all of the SQL.
"""
from __future__ import annotations

import gc
import glob
import os
import queue
import stat
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, NamedTuple

import duckdb

from tracelab.bulk_insert import arrow_column, arrow_table, insert_arrow
from tracelab.errors import DataError, Interrupted, StoreError, UsageError, interruptible, is_interrupt
from tracelab.formats import get_format
from tracelab.formats.base import Source, display_path
from tracelab.formats.common import is_json_document
from tracelab.pairing import pair_steps
from tracelab.parse_pool import ParsePool
from tracelab.prepare import Entry, FileParse, Prepared, adapter_of, prepared_entries, raw_text
from tracelab.sqlfiles import load_sql, run_script

BATCH_RECORDS = 20_000
BATCH_BYTES = 64 << 20
STREAM_BATCH_RECORDS = 10_000
"""Records per batch of a file streamed through its own transaction (at most `BATCH_RECORDS`):
the reading thread and the writer overlap batch by batch, and the first batch is read and the
last one written alone; at 100k episodes, batches of 10k loaded faster than of 20k or 5k."""
LOOKUP_FILES = 4096
LOOKUP_BYTES = 64 << 20
"""Files are read ahead, up to this many (or this many bytes), and looked up in `sources` with
one query: a re-run over a folder of files already ingested costs one query per chunk of files,
not one per file."""
VECTOR_ROWS = 2048  # DuckDB's vector size
VECTOR_BYTES = 16 << 20
"""No DuckDB vector of a batch (`VECTOR_ROWS` consecutive records) holds more record bytes than
this, unless one record alone is larger (up to `RECORD_LIMIT`): DuckDB's JSON functions need
many times a vector's bytes at once (at the default 1 GB limit, 32 records of 1 MB in one vector
run out of memory)."""
CHUNK_RECORDS = 4 * VECTOR_ROWS
"""Records per Arrow chunk of a batch: DuckDB scans one chunk per thread (a chunk of whole
vectors, so that `VECTOR_BYTES` still bounds each vector)."""
STORE_SUFFIXES = (".duckdb", ".wal", ".duckdb.tmp")
"""A store's own files: never read as traces, even inside a folder being ingested."""

@dataclass
class FileReport:
    """What one input file contributed."""

    path: str
    format: str | None = None
    added: int = 0
    skipped: int = 0
    quarantined: int = 0
    status: str = "loaded"
    """loaded | already-ingested | not-a-trace | not-a-file | failed; while a large file is
    still loading (progress calls between its batches), loading"""
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


class Input(NamedTuple):
    """One path to read, or to report as skipped (`skip` says why).

    The path stays text, as the OS gave it: a folder of 100k files already ingested is looked
    up by path, size and time, and never needs a `Path` object per file.
    """

    path: str
    skip: str | None = None


def scan_inputs(paths: Sequence[str | os.PathLike[str] | Input]) -> list[Input]:
    """Files, folders (recursively, in code-point order of relative paths) and globs, in order.

    What is not a regular file (a FIFO, a device, a dangling or looping link) and a store's
    own files (`STORE_SUFFIXES`) come back with the reason they are skipped: never read,
    never dropped silently.

    Raises:
        UsageError: a path that does not exist, or a pattern that matches nothing.
    """
    out: list[Input] = []
    for raw in paths:
        if isinstance(raw, Input):  # scanned already (the CLI scans once to size its progress bar)
            out.append(raw)
            continue
        text = os.fspath(raw)
        if os.path.isdir(text):
            found = list(_walk(text, ""))
            found.sort(key=lambda item: item[0])
            out.extend(item for _, item in found)
        elif os.path.lexists(text):
            out.append(_classify(text))
        elif glob.has_magic(text):
            matches = sorted(glob.glob(text, recursive=True))
            files = [_classify(m) for m in matches if not os.path.isdir(m)]
            if not files:
                raise UsageError(f"{text}: the pattern matches no file")
            out.extend(files)
        else:
            raise UsageError(f"{text}: no such file or folder")
    return out


def _walk(folder: str, prefix: str) -> Iterator[tuple[str, Input]]:
    """Every entry below `folder` that is not a folder, with its `/`-separated relative path.

    Links to folders are not followed (a looping link is then one skipped entry). A regular
    file is known from its directory entry, without a system call of its own.
    """
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        relative = prefix + entry.name
        if entry.is_dir(follow_symlinks=False):
            yield from _walk(entry.path, relative + "/")
        elif entry.is_file(follow_symlinks=False) and not entry.name.endswith(STORE_SUFFIXES):
            yield relative, Input(entry.path)
        else:
            yield relative, _classify(entry.path)


def _classify(path: str) -> Input:
    if os.path.basename(path).endswith(STORE_SUFFIXES):
        return Input(path, "a DuckDB store file, never read as traces")
    try:
        info = os.stat(path)
    except OSError as exc:
        if os.path.islink(path):
            return Input(path, f"a link that leads nowhere ({exc.strerror or exc})")
        return Input(path, f"cannot be read ({exc.strerror or exc})")
    if stat.S_ISDIR(info.st_mode):
        return Input(path, "a link to a folder (links to folders are not followed)")
    if not stat.S_ISREG(info.st_mode):
        kind = "a FIFO" if stat.S_ISFIFO(info.st_mode) else "a device or socket"
        return Input(path, f"not a regular file ({kind})")
    return Input(path)


# --- the SQL side ---------------------------------------------------------------------------


@dataclass
class _File:
    """A file on its way into the store: where its rows go and what it contributed so far."""

    no: int
    """Its position among the inputs: the key of its rows in a batch."""
    source: Source
    format: str
    report: FileReport
    size: int


@dataclass
class _Batch:
    """Prepared records of one batch, from one or more files, plus their quarantined records.

    `line` in the staged table is the record's key in the batch (its position), so that
    records of several files never collide; `src_line` is its line in its file.
    """

    files: list[_File] = field(default_factory=list)
    """The files with records (or quarantined lines, or nothing at all) in this batch, in order."""
    ending: list[_File] = field(default_factory=list)
    """The files whose last records are in this batch: their `sources` rows go with it."""
    file_nos: list[int] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    records: list[Prepared] = field(default_factory=list)
    canonical: list[bytes] = field(default_factory=list)
    quarantine: list[tuple[int, int, str, str | None]] = field(default_factory=list)
    """(file no, line, reason, raw) of the records the adapters or preparation rejected."""
    size: int = 0
    vector_size: int = 0
    """Bytes of the records in the batch's last (partial) DuckDB vector."""
    commit: bool = False
    """True when the batch ends at a file boundary: the transaction commits after it."""
    streamed: bool = False
    """A batch of a file streamed through its own transaction (`_Reader._stream`)."""
    table: Any = None
    """The records as Arrow (`sealed`), in chunks: DuckDB scans one chunk per thread."""
    steps_schema: str | None = None
    """The schema holding the batch's `stage_steps`, once staged (`_Stager`)."""

    def add_file(self, work: _File) -> None:
        if not self.files or self.files[-1] is not work:
            self.files.append(work)

    def fits(self, size: int) -> bool:
        """False when a record of `size` bytes would push the last vector past `VECTOR_BYTES`."""
        vector = 0 if len(self.lines) % VECTOR_ROWS == 0 else self.vector_size
        return not self.lines or vector + size <= VECTOR_BYTES

    def add(self, work: _File, line: int, prepared: Prepared) -> None:
        if len(self.lines) % VECTOR_ROWS == 0:
            self.vector_size = 0
        self.add_file(work)
        self.file_nos.append(work.no)
        self.lines.append(line)
        self.records.append(prepared)
        self.canonical.append(prepared.canonical)
        self.size += prepared.size
        self.vector_size += prepared.size

    @property
    def full(self) -> bool:
        records = min(BATCH_RECORDS, STREAM_BATCH_RECORDS) if self.streamed else BATCH_RECORDS
        return len(self.lines) >= records or self.size >= BATCH_BYTES

    def sealed(self, commit: bool) -> _Batch:
        """The batch with its Arrow table built (in the reading thread) and its records dropped."""
        import pyarrow as pa

        records = self.records
        by_no = {work.no: work for work in self.files}
        table = arrow_table({
            "line": range(len(records)),
            "file_no": self.file_nos,
            "src_line": self.lines,
            "source_uri": [by_no[n].source.uri for n in self.file_nos],
            "source_format": [by_no[n].format for n in self.file_nos],
            "doc": [r.head for r in records],
            "steps": [r.steps for r in records],
            "n_steps": arrow_column([r.n_steps for r in records], pa.int32()),
            "tools": [r.tools for r in records],
            "hash": [r.content_hash for r in records],
        })
        self.table = pa.Table.from_batches(table.to_batches(max_chunksize=CHUNK_RECORDS), table.schema)
        self.records = []
        self.commit = commit
        return self


@dataclass
class _Failed:
    """A streamed file that could not be read to its end: its transaction is rolled back."""

    work: _File
    message: str


Unit = _Batch | list[FileReport] | FileReport | _Failed | tuple[str, FileReport]
"""What the reading thread hands over: a batch to write; the reports of files that write
nothing; a streamed file that failed; or ("duplicate", report) for a file whose content is
that of an earlier input of the same run."""


class _Reader:
    """The reading thread's work: files in, batches out (see the module docstring)."""

    def __init__(self, lookup: duckdb.DuckDBPyConnection, inputs: list[Input], forced: str | None,
                 replace: bool, parser: ParsePool) -> None:
        self.lookup = lookup
        self.inputs = inputs
        self.forced = forced
        self.replace = replace
        self.parser = parser
        self.group = _Batch()
        self.first_of_hash: dict[str, FileReport] = {}
        self.order: dict[int, int] = {}
        """Each report's input position, by `id` (reports come back in the order files complete)."""

    def _at(self, no: int, report: FileReport) -> FileReport:
        self.order[id(report)] = no
        return report

    def units(self) -> Iterator[Unit]:
        for start in range(0, len(self.inputs), LOOKUP_FILES):
            chunk = self.inputs[start:start + LOOKUP_FILES]
            recorded = self._recorded(chunk)
            read: list[tuple[int, Source | FileReport]] = []
            held = 0
            for no, item in enumerate(chunk, start=start):
                known = recorded.get(no - start)
                if known is not None:
                    uri, fmt, episodes = known
                    read.append((no, FileReport(uri, fmt, skipped=episodes or 0, status="already-ingested")))
                    continue
                source = self._read(item)
                read.append((no, source))
                if isinstance(source, Source) and source.in_memory:
                    held += source.size
                if held >= LOOKUP_BYTES:
                    yield from self._settle(read)
                    read, held = [], 0
            yield from self._settle(read)
        if self.group.files:
            yield self.group.sealed(commit=True)

    def _settle(self, read: list[tuple[int, Source | FileReport]]) -> Iterator[Unit]:
        """The files read: those whose hash is recorded are reported, the others loaded."""
        known = self._known([s.content_hash for _, s in read if isinstance(s, Source)])
        # files read whole are parsed ahead, in input order (in worker processes, for a large corpus)
        parsed = self.parser.files([(no, s) for no, s in read if isinstance(s, Source)
                                    and s.content_hash not in known and s.in_memory])
        # reports of files that write nothing travel together: one hand-over between the
        # threads per chunk, not per file (a re-run is almost only those)
        reports: list[FileReport] = []
        for no, source in read:
            if isinstance(source, FileReport):
                reports.append(self._at(no, source))
                continue
            if source.content_hash in known:
                fmt, episodes = known[source.content_hash]
                reports.append(self._at(no, FileReport(source.uri, fmt, skipped=episodes or 0,
                                                       status="already-ingested")))
                continue
            result = next(parsed)[1] if source.in_memory else None
            if not self.replace and source.content_hash in self.first_of_hash:
                first = self.first_of_hash[source.content_hash].path
                yield ("duplicate", self._at(no, FileReport(source.uri, status="already-ingested",
                                                            message=first)))
                continue
            units = self._file(no, source, result) if result is not None else self._streamed(no, source)
            for unit in units:
                if isinstance(unit, FileReport):
                    reports.append(self._at(no, unit))
                else:
                    yield unit
        if reports:
            yield reports

    def _recorded(self, items: list[Input]) -> dict[int, tuple[str, str, int]]:
        """The files recorded in `sources` with their current path, size and time, by position
        in `items`, with their path as shown, format and episodes: one query, no read.

        The paths travel as bound lists, not an Arrow table: a re-run that finds every file
        recorded then never imports pyarrow (nor the pandas DuckDB then looks for), a third of
        its time at 100k files.
        """
        if self.replace:
            return {}
        at: dict[str, list[int]] = {}  # a path given twice is two inputs
        uris, sizes, times = [], [], []
        for i, item in enumerate(items):
            if item.skip is not None:
                continue
            try:
                info = os.stat(item.path)
            except OSError:
                continue  # reported when it is read
            uri = display_path(item.path)
            at.setdefault(uri, []).append(i)
            uris.append(uri)
            sizes.append(info.st_size)
            times.append(info.st_mtime_ns)
        if not at:
            return {}
        rows = self.lookup.execute(load_sql("ingest/recorded"),
                                   {"uris": uris, "sizes": sizes, "times": times}).fetchall()
        return {i: (uri, fmt, n) for uri, fmt, n in rows for i in at[uri]}

    def _read(self, item: Input) -> Source | FileReport:
        if item.skip is not None:
            uri = display_path(item.path)
            return FileReport(uri, status="not-a-file", message=f"{uri}: {item.skip}")
        source = Source(item.path)
        try:
            source.content_hash  # noqa: B018  (reads a small file whole, hashes a large one)
        except OSError as exc:
            return FileReport(source.uri, status="failed", message=f"{source.uri}: {exc.strerror or exc}")
        return source

    def _known(self, hashes: list[str]) -> dict[str, tuple[str, int]]:
        """The recorded format and episode count of each hash already in `sources`: one query."""
        if self.replace or not hashes:
            return {}
        # a bound list, as in `_recorded` (measured: faster than a registered Arrow table too)
        rows = self.lookup.execute(load_sql("ingest/known"), {"hashes": hashes}).fetchall()
        return {h: (fmt, n) for h, fmt, n in rows}

    def _file(self, no: int, source: Source, result: FileParse) -> Iterator[Unit]:
        """A file read whole and parsed (`prepare.parse_file`): into the shared batch, or
        streamed through its own transaction when too large to share one (or with --replace)."""
        source.release()  # parsed: its bytes are no longer needed
        if result.status != "ok":
            yield FileReport(source.uri, result.format, status=result.status, message=result.message)
            return
        assert result.format is not None
        work = _File(no, source, result.format, self._at(no, FileReport(source.uri, result.format)), source.size)
        self.first_of_hash[source.content_hash] = work.report
        entries = result.entries
        size = sum(entry[1].size for entry in entries if len(entry) == 2)
        if self.replace or len(entries) > BATCH_RECORDS or size > BATCH_BYTES:
            yield from self._stream(work, iter(entries), [])
        else:
            yield from self._add(work, entries)

    def _streamed(self, no: int, source: Source) -> Iterator[Unit]:
        """A file too large to read whole: detected from its sample, then streamed batch by batch."""
        module = adapter_of(source, self.forced)
        if isinstance(module, FileParse):
            yield FileReport(source.uri, status=module.status, message=module.message)
            return
        work = _File(no, source, module.name, self._at(no, FileReport(source.uri, module.name)), source.size)
        self.first_of_hash[source.content_hash] = work.report
        if hasattr(module, "line_episodes") and not is_json_document(source):
            items = self.parser.lines(module.name, source)
        else:
            items = prepared_entries(module.episodes(source))
        yield from self._stream(work, items, [])

    def _add(self, work: _File, entries: list[Entry]) -> Iterator[_Batch]:
        """A whole small file into the shared batch; the batch goes when full, after the file."""
        group = self.group
        group.add_file(work)
        for entry in entries:
            if len(entry) == 3:
                group.quarantine.append((work.no, *entry))
                continue
            line, prepared = entry
            if not group.fits(prepared.size):
                yield group.sealed(commit=False)  # the file goes on in the next batch, same transaction
                group = self.group = _Batch()
                group.add_file(work)
            group.add(work, line, prepared)
        group.ending.append(work)
        if group.full:
            yield group.sealed(commit=True)
            self.group = _Batch()

    def _stream(self, work: _File, items: Iterator[Any], held: list[Any]) -> Iterator[Unit]:
        """A file in its own transaction, batch by batch; a read error fails it (`_Failed`)."""
        if self.group.files:
            yield self.group.sealed(commit=True)
        batch = _Batch(streamed=True)
        batch.add_file(work)
        try:
            for entry in _chain(held, items):
                if len(entry) == 3:
                    batch.quarantine.append((work.no, *entry))
                    continue
                line, prepared = entry
                if not batch.fits(prepared.size):
                    yield batch.sealed(commit=False)
                    batch = _Batch(streamed=True)
                    batch.add_file(work)
                batch.add(work, line, prepared)
                if batch.full:
                    yield batch.sealed(commit=False)
                    batch = _Batch(streamed=True)
                    batch.add_file(work)
        except DataError as exc:
            yield _Failed(work, str(exc))
            self.group = _Batch()
            return
        batch.ending.append(work)
        yield batch.sealed(commit=True)
        self.group = _Batch()


def _chain(first: list[Any], rest: Iterator[Any]) -> Iterator[Any]:
    yield from first
    first.clear()
    yield from rest


class _Writer:
    """The main thread's work: stage each batch on `scratch`, write its rows through `con`."""

    def __init__(self, con: duckdb.DuckDBPyConnection, scratch: duckdb.DuckDBPyConnection, stager: _Stager,
                 replace: bool, progress: Callable[[FileReport, int], None] | None,
                 before_write: Callable[[], None] | None = None) -> None:
        self.con = con
        self.stager = stager
        self.before_write = before_write
        self.scratch = scratch
        self.replace = replace
        self.progress = progress
        self.ingested_at = datetime.now(timezone.utc)
        self.reports: list[FileReport] = []
        self.in_txn = False
        self.open: list[_Batch] = []
        """The batches of the open transaction, unless streamed (kept to load its files one by one
        on a memory error)."""
        self.files: dict[int, _File] = {}
        """The files with rows in the open transaction."""
        self.ending: list[_File] = []
        """The files of the open transaction that are complete: committed with their `sources` rows."""
        self.dead: set[int] = set()
        """Files whose transaction failed: their later batches are dropped."""
        self.duplicates: list[FileReport] = []

    # -- transactions --

    def take(self, unit: Unit) -> None:
        if isinstance(unit, list):
            for report in unit:
                self._done(report)
        elif isinstance(unit, FileReport):
            self._done(unit)
        elif isinstance(unit, _Failed):
            self._rollback()
            self._fail(unit.work, unit.message)
        elif isinstance(unit, tuple):
            self.duplicates.append(unit[1])
            self.reports.append(unit[1])
        elif any(work.no in self.dead for work in unit.files):
            _drop_staged(self.scratch, unit)  # its live files' part is staged again
            keep = {work.no for work in unit.files if work.no not in self.dead}
            if keep:
                self._write(_part(unit, keep))
        else:
            self._write(unit)

    def _write(self, batch: _Batch) -> None:
        if self.before_write is not None:
            self.before_write()
            self.before_write = None
        if not self.in_txn:
            self.con.begin()
            self.in_txn = True
            run_script(self.scratch, "ingest/txn_seen")
        for work in batch.files:
            self.files.setdefault(work.no, work)
        if not batch.streamed:
            self.open.append(batch)
        self.ending.extend(batch.ending)
        try:
            self._load_batch(batch)
            if batch.commit:
                self._insert_sources(self.ending)
                self.con.commit()
        except duckdb.InterruptException:
            raise  # Ctrl-C while DuckDB ran: `ingest_paths` rolls back and says what was done
        except duckdb.Error as exc:
            self._failed_write(exc)
            return
        if batch.commit:
            self.in_txn = False
            ending, self.ending, self.open, self.files = self.ending, [], [], {}
            for work in ending:
                self._done(work.report, work.size)
        elif self.progress is not None:
            for work in batch.files:
                work.report.status = "loading"
                self.progress(work.report, 0)
                work.report.status = "loaded"

    def _failed_write(self, exc: duckdb.Error) -> None:
        """A batch the store refused. Out of memory: each file of the transaction is tried alone,
        and a file that still fails is reported; anything else (a full disk) stops the ingest."""
        batches, files = self.open, list(self.files.values())
        self._rollback()
        if not _out_of_memory(exc):
            # The store refused a write (a full disk, a file size limit): the files of this
            # transaction are rolled back, those before stay committed, the rest are not tried.
            who = (f"{files[0].source.uri}: not loaded" if len(files) == 1 else
                   f"{files[0].source.uri} and {len(files) - 1:,} more files: not loaded")
            them = "it" if len(files) == 1 else "them"
            raise StoreError(f"{who}, the store could not be written ({_first_line(exc)}); "
                             f"the files before {them} are stored") from None
        for work in files:
            if len(files) > 1 and not any(b.streamed for b in batches):
                self._retry_alone(work, batches, exc)
            else:
                self._fail(work, _memory_message(work, exc))

    def _retry_alone(self, work: _File, batches: list[_Batch], first: duckdb.Error) -> None:
        alone = [_part(b, {work.no}) for b in batches if work in b.files]
        if work not in alone[-1].ending:
            # its last records are in a batch still to come: it fails, and that batch loses it
            self._fail(work, _memory_message(work, first))
            return
        work.report.added = work.report.skipped = work.report.quarantined = 0
        try:
            self.con.begin()
            self.in_txn = True
            run_script(self.scratch, "ingest/txn_seen")
            for part in alone:
                self._load_batch(part)
            self._insert_sources([work])
            self.con.commit()
            self.in_txn = False
        except duckdb.InterruptException:
            raise
        except duckdb.Error as exc:
            self._rollback()
            if not _out_of_memory(exc):
                raise StoreError(f"{work.source.uri}: not loaded, the store could not be written "
                                 f"({_first_line(exc)})") from None
            self._fail(work, _memory_message(work, exc))
            return
        self._done(work.report, work.size)

    def _fail(self, work: _File, message: str) -> None:
        self.dead.add(work.no)
        work.report.status, work.report.message = "failed", message
        work.report.added = work.report.skipped = work.report.quarantined = 0
        self._done(work.report, work.size)

    def _done(self, report: FileReport, size: int = 0) -> None:
        self.reports.append(report)
        if self.progress is not None:
            self.progress(report, size)

    def _rollback(self) -> None:
        """Roll back the open transaction, unless a failed commit (or a fatal error) ended it."""
        self.open, self.ending, self.files = [], [], {}
        if not self.in_txn:
            return
        self.in_txn = False
        try:
            self.con.rollback()
        except duckdb.Error:
            pass

    def interrupted(self, total: int) -> Interrupted:
        """Roll back what is open; the one-line summary of what was completed (docs/trace-format.md §6)."""
        self._rollback()
        done = [r for r in self.reports if r.status != "loading"]
        loaded = sum(1 for r in done if r.status == "loaded")
        added = sum(r.added for r in done if r.status == "loaded")
        left = total - len(done)
        rest = "the other file was not loaded" if left == 1 else f"the other {left:,} were not loaded"
        return Interrupted(f"interrupted: {len(done):,} of {total:,} files done ({loaded:,} loaded, "
                           f"{added:,} episode{'' if added == 1 else 's'} added); {rest}")

    def finish(self) -> list[FileReport]:
        """Reports of files whose content was an earlier input's, now that it is settled."""
        duplicate = {id(d) for d in self.duplicates}
        by_path = {r.path: r for r in self.reports if id(r) not in duplicate}
        for dup in self.duplicates:
            first = by_path.get(dup.message or "")
            dup.message = None
            if first is None or first.status != "loaded":
                dup.status = "failed"
                dup.message = f"{dup.path}: the same content as {first.path if first else '?'}, which was not loaded"
            else:
                dup.format, dup.skipped = first.format, first.added + first.skipped
            if self.progress is not None:
                self.progress(dup, 0)
        return self.reports

    # -- one batch --

    def _insert_sources(self, ending: list[_File]) -> None:
        if not ending:
            return
        if self.replace:
            for work in ending:
                run_script(self.con, "ingest/forget_source",
                           {"content_hash": work.source.content_hash, "source_uri": work.source.uri})
        insert_arrow(self.con, "sources", {
            "source_uri": [w.source.uri for w in ending],
            "content_hash": [w.source.content_hash for w in ending],
            "format": [w.format for w in ending],
            "episodes": [w.report.added for w in ending],
            "quarantined": [w.report.quarantined for w in ending],
            "ingested_at": [self.ingested_at] * len(ending),
            "file_size": [w.source.stat[0] if w.source.stat else None for w in ending],
            "file_mtime_ns": [w.source.stat[1] if w.source.stat else None for w in ending],
        })

    def _load_batch(self, batch: _Batch) -> None:
        rejected = list(batch.quarantine)
        by_no = {work.no: work for work in batch.files}
        if batch.table.num_rows:
            rejected.extend(self._stage(batch, by_no))
        if rejected:
            rejected.sort(key=lambda q: (q[0], q[1]))
            insert_arrow(self.con, "quarantine", {
                "source_uri": [by_no[q[0]].source.uri for q in rejected],
                "line": [q[1] for q in rejected],
                "reason": [q[2] for q in rejected],
                "raw": [q[3] for q in rejected],
                "ingested_at": [self.ingested_at] * len(rejected),
            })
            for q in rejected:
                by_no[q[0]].report.quarantined += 1

    def _stage(self, batch: _Batch, by_no: dict[int, _File]) -> list[tuple[int, int, str, str | None]]:
        if batch.steps_schema is None:  # not staged ahead (a part of a batch, or staging it failed there)
            self.stager.stage(batch)
        try:
            return self._staged(batch, by_no)
        finally:
            _drop_staged(self.scratch, batch)

    def _staged(self, batch: _Batch, by_no: dict[int, _File]) -> list[tuple[int, int, str, str | None]]:
        scratch = self.scratch
        scratch.execute(f"CREATE OR REPLACE TEMP VIEW stage_steps AS FROM {batch.steps_schema}.stage_steps")
        scratch.register("stage_raw", batch.table)
        run_script(scratch, "ingest/stage")
        scratch.unregister("stage_raw")
        run_script(scratch, "ingest/decide", {"replace": self.replace})
        rejected = []
        replaced = []
        decisions = scratch.execute(
            "SELECT line, file_no, src_line, eid, action, reason, first_line FROM stage_decide "
            "WHERE action <> 'add'"
        ).fetchall()
        for line, no, src_line, eid, action, reason, first_line in decisions:
            raw = raw_text(batch.canonical[line])
            if action == "bad":
                rejected.append((no, src_line, reason, raw))
            elif action == "skip":
                by_no[no].report.skipped += 1
            elif action == "conflict":
                rejected.append((no, src_line, f"episode_id {eid!r} is already stored with different "
                                 "content (use --replace to replace it)", raw))
            elif action == "conflict_file":
                rejected.append((no, src_line, f"episode_id {eid!r} appears earlier in this file "
                                 f"(line {first_line}) with different content", raw))
            elif action == "replace":
                replaced.append(eid)
        if replaced:
            run_script(self.con, "ingest/replace", {"replaced": replaced})
        run_script(scratch, "ingest/pairs")
        self._pair_sequentially()
        for table in ROW_TABLES:
            statement, params = _bound(f"ingest/rows/{table}", {"ingested_at": self.ingested_at})
            rows = scratch.sql(statement, params=params).to_arrow_table()
            self.con.register(f"batch_{table}", _read_once(rows))
            del rows  # the stream alone holds the batches now
        run_script(self.con, "ingest/insert")
        for table in ROW_TABLES:
            self.con.unregister(f"batch_{table}")
        for no, added in scratch.execute(
                "SELECT file_no, count(*) FROM stage_keep GROUP BY file_no").fetchall():
            by_no[no].report.added += added
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


def _part(batch: _Batch, nos: set[int]) -> _Batch:
    """The records and quarantined lines of the files `nos` of a sealed batch, as a batch."""
    import pyarrow.compute as pc

    part = _Batch(files=[w for w in batch.files if w.no in nos], ending=[w for w in batch.ending if w.no in nos],
                  quarantine=[q for q in batch.quarantine if q[0] in nos], commit=batch.commit,
                  streamed=batch.streamed)
    keep = [n in nos for n in batch.file_nos]
    part.file_nos = [n for n in batch.file_nos if n in nos]
    part.canonical = [c for c, k in zip(batch.canonical, keep, strict=True) if k]
    table = batch.table.filter(pc.is_in(  # type: ignore[attr-defined]  # pyarrow.compute builds its functions at import
        batch.table["file_no"], arrow_column(sorted(nos))))
    part.table = table.set_column(0, "line", arrow_column(range(table.num_rows)))
    return part


def _memory_message(work: _File, exc: duckdb.Error) -> str:
    return (f"{work.source.uri}: not loaded, DuckDB ran out of memory ({_first_line(exc)}); "
            "raise TRACELAB_MEMORY_LIMIT or split the file")


def _out_of_memory(exc: duckdb.Error) -> bool:
    return isinstance(exc, duckdb.OutOfMemoryException) or "out of memory" in str(exc).lower()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


ROW_TABLES = ("episodes", "steps", "tool_calls", "tool_definitions")
"""The tables a batch writes, each from `sql/ingest/rows/<table>.sql`."""


def _bound(name: str, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The statement of `sql/<name>.sql` and the named parameters it uses."""
    statement = load_sql(name)
    return statement, {k: v for k, v in params.items() if f"${k}" in statement}


def _read_once(table: Any) -> Any:
    """`table` as a stream whose batches are dropped as they are read.

    A view registered inside the transaction lives until commit, and so does what it
    holds: a stream that has been read holds nothing.
    """
    import pyarrow as pa

    batches = table.to_batches()

    def drain() -> Iterator[Any]:
        while batches:
            yield batches.pop(0)

    return pa.RecordBatchReader.from_batches(table.schema, drain())


def _in_background(units: Iterator[Unit]) -> Iterator[Unit]:
    """Produce units in a thread, one ahead: DuckDB releases the GIL while it runs SQL."""
    slots: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=2)
    stop = threading.Event()

    def produce() -> None:
        try:
            with _collector_paused():
                for unit in units:
                    while not stop.is_set():
                        try:
                            slots.put(("unit", unit), timeout=0.1)
                            break
                        except queue.Full:
                            continue
                    if stop.is_set():
                        return
            slots.put(("done", None))
        except BaseException as exc:  # handed to the consumer, raised there
            slots.put(("error", exc))

    worker = threading.Thread(target=produce, name="tracelab-read", daemon=True)
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
    paths: Sequence[str | os.PathLike[str] | Input],
    *,
    format: str = "auto",
    replace: bool = False,
    progress: Callable[[FileReport, int], None] | None = None,
    workers: int = 0,
    before_write: Callable[[], None] | None = None,
) -> IngestReport:
    """Ingest files, folders and globs into the store behind `con`; each file wholly or not at all.

    Args:
        con: a read-write connection to a bootstrapped store.
        paths: files, folders (read recursively) and glob patterns.
        format: ``auto`` or a format name (`tracelab formats`).
        replace: read files again even when their content hash is recorded, and replace
            stored episodes whose content differs, instead of quarantining.
        progress: called after each file with its report and its size in bytes (and, between
            the batches of a large file, with its report in status ``loading``).
        workers: processes that parse once the input is large (`tracelab.parse_pool`); 0 or 1
            parses in a thread of this process. `tracelab ingest` uses every CPU
            (`TRACELAB_WORKERS`). A library caller that asks for workers must run from a script
            whose top-level code is under ``if __name__ == "__main__":``, as with any
            `multiprocessing` code: a worker imports the caller's main module.
        before_write: called once, before the first write into the store (`Store.verify`); an
            ingest that writes nothing (every file already ingested) never calls it.

    Returns:
        The per-file reports, in input order. A file that cannot be read to its end, or that
        DuckDB runs out of memory loading, is rolled back and reported with status ``failed``;
        the other files still load.

    Raises:
        Interrupted: Ctrl-C (or SIGTERM, turned into it by the CLI); the store holds exactly
            the files reported done.
        StoreError: the store refused a write (a full disk); the files before are stored.
    """
    inputs = scan_inputs(paths)
    forced = None if format == "auto" else get_format(format).name
    parser = ParsePool(forced, workers)
    with _staging_connection(con) as scratch, _staging_database(con) as steps_db, _collector_paused():
        lookup = interruptible(con.cursor())
        ahead, behind = _Stager(con, steps_db, "ahead"), _Stager(con, steps_db, "writer")
        writer = _Writer(con, scratch, behind, replace, progress, before_write)
        reader = _Reader(lookup, inputs, forced, replace, parser)
        try:
            for unit in _in_background(_staged_ahead(reader.units(), ahead)):
                writer.take(unit)
        except BaseException as exc:
            if is_interrupt(exc):
                raise writer.interrupted(len(inputs)) from None
            writer._rollback()
            raise
        finally:
            lookup.close()
            parser.close()
            ahead.close()
            behind.close()
        reports = writer.finish()
    return IngestReport(sorted(reports, key=lambda r: reader.order[id(r)]))


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
def _staging_database(con: duckdb.DuckDBPyConnection) -> Iterator[str]:
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


class _Stager:
    """Stages batches' steps (sql/ingest/stage_steps.sql), each into a schema of its own in the
    staging database (`_staging_database`), on a connection of its own: one for the reading thread,
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

    def stage(self, batch: _Batch) -> None:
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

    def stage_ahead(self, batch: _Batch) -> None:
        """`stage`, leaving the batch to the writer's own staging if that fails (out of memory):
        the writer then meets the error itself, and reports it as it would have."""
        try:
            self.stage(batch)
        except duckdb.InterruptException:
            raise
        except duckdb.Error:
            _drop_staged(self.cursor, batch)

    def close(self) -> None:
        if self._cursor is not None:
            self._cursor.close()


def _drop_staged(con: duckdb.DuckDBPyConnection, batch: _Batch) -> None:
    """Free the batch's staged steps (its schema in the staging database), if any."""
    schema, batch.steps_schema = batch.steps_schema, None
    if schema is not None:
        try:
            con.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        except duckdb.Error:
            pass  # interrupted: the whole database goes at the end of the ingest


def _staged_ahead(units: Iterator[Unit], stager: _Stager) -> Iterator[Unit]:
    """The units, each batch's steps staged (in the reading thread, see the module docstring)."""
    for unit in units:
        if isinstance(unit, _Batch) and unit.table is not None and unit.table.num_rows:
            stager.stage_ahead(unit)
        yield unit
