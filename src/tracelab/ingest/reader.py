"""The reading thread: files in, batches out (hashes, look-ups in `sources`, parsing, streaming)."""
from __future__ import annotations

import os
import queue
import threading
from collections.abc import Iterator
from typing import Any

import duckdb

from tracelab.errors import DataError
from tracelab.formats.records import is_json_document
from tracelab.formats.source import Source, display_path
from tracelab.ingest import batches
from tracelab.ingest.batches import Batch, Failed, File, FileReport, Unit
from tracelab.ingest.inputs import Input
from tracelab.ingest.parse_pool import ParsePool
from tracelab.ingest.prepare import Entry, FileParse, adapter_of, prepared_entries
from tracelab.ingest.staging import collector_paused
from tracelab.sqlfiles import load_sql

LOOKUP_FILES = 4096
LOOKUP_BYTES = 64 << 20
"""Files are read ahead, up to this many (or this many bytes), and looked up in `sources` with
one query: a re-run over a folder of files already ingested costs one query per chunk of files,
not one per file."""


class Reader:
    """The reading thread's work: files in, batches out (see the module docstring)."""

    def __init__(self, lookup: duckdb.DuckDBPyConnection, inputs: list[Input], forced: str | None,
                 replace: bool, parser: ParsePool) -> None:
        self.lookup = lookup
        self.inputs = inputs
        self.forced = forced
        self.replace = replace
        self.parser = parser
        self.group = Batch()
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
        work = File(no, source, result.format,
                    self._at(no, FileReport(source.uri, result.format, unread=result.unread)), source.size)
        self.first_of_hash[source.content_hash] = work.report
        entries = result.entries
        size = sum(entry[1].size for entry in entries if len(entry) == 2)
        if self.replace or len(entries) > batches.BATCH_RECORDS or size > batches.BATCH_BYTES:
            yield from self._stream(work, iter(entries), [])
        else:
            yield from self._add(work, entries)

    def _streamed(self, no: int, source: Source) -> Iterator[Unit]:
        """A file too large to read whole: detected from its sample, then streamed batch by batch."""
        module = adapter_of(source, self.forced)
        if isinstance(module, FileParse):
            yield FileReport(source.uri, status=module.status, message=module.message)
            return
        work = File(no, source, module.name, self._at(no, FileReport(source.uri, module.name)), source.size)
        self.first_of_hash[source.content_hash] = work.report
        if hasattr(module, "line_episodes") and not is_json_document(source):
            items = self.parser.lines(module.name, source)
        else:
            items = prepared_entries(module.episodes(source))
        yield from self._stream(work, items, [])

    def _add(self, work: File, entries: list[Entry]) -> Iterator[Batch]:
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
                group = self.group = Batch()
                group.add_file(work)
            group.add(work, line, prepared)
        group.ending.append(work)
        if group.full:
            yield group.sealed(commit=True)
            self.group = Batch()

    def _stream(self, work: File, items: Iterator[Any], held: list[Any]) -> Iterator[Unit]:
        """A file in its own transaction, batch by batch; a read error fails it (`Failed`)."""
        if self.group.files:
            yield self.group.sealed(commit=True)
        batch = Batch(streamed=True)
        batch.add_file(work)
        try:
            for entry in _chain(held, items):
                if len(entry) == 3:
                    batch.quarantine.append((work.no, *entry))
                    continue
                line, prepared = entry
                if not batch.fits(prepared.size):
                    yield batch.sealed(commit=False)
                    batch = Batch(streamed=True)
                    batch.add_file(work)
                batch.add(work, line, prepared)
                if batch.full:
                    yield batch.sealed(commit=False)
                    batch = Batch(streamed=True)
                    batch.add_file(work)
        except DataError as exc:
            yield Failed(work, str(exc))
            self.group = Batch()
            return
        if work.source.unread:  # read in this thread: what the adapter did not read
            work.report.unread = dict(work.source.unread)
        batch.ending.append(work)
        yield batch.sealed(commit=True)
        self.group = Batch()


def _chain(first: list[Any], rest: Iterator[Any]) -> Iterator[Any]:
    yield from first
    first.clear()
    yield from rest


def in_background(units: Iterator[Unit]) -> Iterator[Unit]:
    """Produce units in a thread, one ahead: DuckDB releases the GIL while it runs SQL."""
    slots: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=2)
    stop = threading.Event()

    def produce() -> None:
        try:
            with collector_paused():
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
