"""What moves from the reading thread to the writer: batches of prepared records, and per-file reports."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tracelab.bulk_insert import arrow_column, arrow_table
from tracelab.formats.source import Source
from tracelab.ingest.prepare import Prepared

BATCH_RECORDS = 20_000
BATCH_BYTES = 64 << 20


STREAM_BATCH_RECORDS = 10_000
"""Records per batch of a file streamed through its own transaction (at most `BATCH_RECORDS`):
the reading thread and the writer overlap batch by batch, and the first batch is read and the
last one written alone: larger batches overlap less, smaller ones pay a batch's fixed costs
more often (BENCHMARKS.md, the ingest rows, measure the size chosen)."""


VECTOR_ROWS = 2048  # DuckDB's vector size
VECTOR_BYTES = 16 << 20
"""No DuckDB vector of a batch (`VECTOR_ROWS` consecutive records) holds more record bytes than
this, unless one record alone is larger (up to `RECORD_LIMIT`): DuckDB's JSON functions need
many times a vector's bytes at once (at the default 1 GB limit, 32 records of 1 MB in one vector
run out of memory)."""


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
    merged: int = 0
    """Episodes identical to one an earlier file gave, in a format that reads a session whole from
    each of its files (Claude Code's sub-agent and continuation files): merged into that session."""
    quarantined: int = 0
    status: str = "loaded"
    """loaded | already-ingested | not-a-trace | not-a-file | failed; while a large file is
    still loading (progress calls between its batches), loading"""
    message: str | None = None
    unread: dict[str, int] | None = None
    """Records of types its adapter does not know, by type: counted, not read (`sources.unread`)."""


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
    def merged(self) -> int:
        """Episodes merged into an earlier file's session (`FileReport.merged`)."""
        return sum(f.merged for f in self.files)

    @property
    def quarantined(self) -> int:
        return sum(f.quarantined for f in self.files)

    @property
    def failed(self) -> list[FileReport]:
        return [f for f in self.files if f.status == "failed"]

    def count(self, status: str) -> int:
        return sum(1 for f in self.files if f.status == status)


@dataclass
class File:
    """A file on its way into the store: where its rows go and what it contributed so far."""

    no: int
    """Its position among the inputs: the key of its rows in a batch."""
    source: Source
    format: str
    report: FileReport
    size: int


@dataclass
class Batch:
    """Prepared records of one batch, from one or more files, plus their quarantined records.

    `line` in the staged table is the record's key in the batch (its position), so that
    records of several files never collide; `src_line` is its line in its file.
    """

    files: list[File] = field(default_factory=list)
    """The files with records (or quarantined lines, or nothing at all) in this batch, in order."""
    ending: list[File] = field(default_factory=list)
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
    """A batch of a file streamed through its own transaction (`Reader._stream`)."""
    table: Any = None
    """The records as Arrow (`sealed`), in chunks: DuckDB scans one chunk per thread."""
    steps_schema: str | None = None
    """The schema holding the batch's `stage_steps`, once staged (`Stager`)."""

    def add_file(self, work: File) -> None:
        if not self.files or self.files[-1] is not work:
            self.files.append(work)

    def fits(self, size: int) -> bool:
        """False when a record of `size` bytes would push the last vector past `VECTOR_BYTES`."""
        vector = 0 if len(self.lines) % VECTOR_ROWS == 0 else self.vector_size
        return not self.lines or vector + size <= VECTOR_BYTES

    def add(self, work: File, line: int, prepared: Prepared) -> None:
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

    def sealed(self, commit: bool) -> Batch:
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
class Failed:
    """A streamed file that could not be read to its end: its transaction is rolled back."""

    work: File
    message: str


Unit = Batch | list[FileReport] | FileReport | Failed | tuple[str, FileReport]
"""What the reading thread hands over: a batch to write; the reports of files that write
nothing; a streamed file that failed; or ("duplicate", report) for a file whose content is
that of an earlier input of the same run."""


def files_of(batch: Batch, nos: set[int]) -> Batch:
    """The records and quarantined lines of the files `nos` of a sealed batch, as a batch."""
    import pyarrow.compute as pc

    part = Batch(files=[w for w in batch.files if w.no in nos], ending=[w for w in batch.ending if w.no in nos],
                  quarantine=[q for q in batch.quarantine if q[0] in nos], commit=batch.commit,
                  streamed=batch.streamed)
    keep = [n in nos for n in batch.file_nos]
    part.file_nos = [n for n in batch.file_nos if n in nos]
    part.canonical = [c for c, k in zip(batch.canonical, keep, strict=True) if k]
    table = batch.table.filter(pc.is_in(  # type: ignore[attr-defined]  # pyarrow.compute builds its functions at import
        batch.table["file_no"], arrow_column(sorted(nos))))
    part.table = table.set_column(0, "line", arrow_column(range(table.num_rows)))
    return part
