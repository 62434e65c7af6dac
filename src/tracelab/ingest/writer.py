"""The writer: stage each batch, write its rows in one transaction with its files' `sources` rows."""
from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import duckdb

from tracelab.bulk_insert import insert_arrow
from tracelab.errors import Interrupted, StoreError, first_line
from tracelab.formats import merges_files
from tracelab.formats.values import json_text
from tracelab.ingest.batches import Batch, Failed, File, FileReport, Unit, files_of
from tracelab.ingest.pairing import pair_steps
from tracelab.ingest.prepare import raw_text
from tracelab.ingest.staging import Stager, drop_staged
from tracelab.sqlfiles import load_sql, run_script


@dataclass(frozen=True)
class EpisodeFill:
    """What `ingest --agent/--model/--tag` sets on the episodes an ingest adds: `agent` and `model`
    where a record has none, `tags` added after its own (docs/cli.md, `tracelab ingest`)."""

    agent: str | None = None
    model: str | None = None
    tags: tuple[str, ...] = ()

    def params(self) -> dict[str, Any]:
        """The bound parameters of `sql/ingest/rows/episodes.sql`."""
        return {"fill_agent": self.agent, "fill_model": self.model, "fill_tags": list(dict.fromkeys(self.tags))}


class Writer:
    """The main thread's work: stage each batch on `scratch`, write its rows through `con`."""

    def __init__(self, con: duckdb.DuckDBPyConnection, scratch: duckdb.DuckDBPyConnection, stager: Stager,
                 replace: bool, progress: Callable[[FileReport, int], None] | None,
                 before_write: Callable[[], None] | None = None, fill: EpisodeFill | None = None) -> None:
        self.con = con
        self.fill = fill or EpisodeFill()
        self.stager = stager
        self.before_write = before_write
        self.scratch = scratch
        self.replace = replace
        self.progress = progress
        self.ingested_at = datetime.now(timezone.utc)
        self.reports: list[FileReport] = []
        self.in_txn = False
        self.open: list[Batch] = []
        """The batches of the open transaction, unless streamed (kept to load its files one by one
        on a memory error)."""
        self.files: dict[int, File] = {}
        """The files with rows in the open transaction."""
        self.ending: list[File] = []
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
        elif isinstance(unit, Failed):
            self._rollback()
            self._fail(unit.work, unit.message)
        elif isinstance(unit, tuple):
            self.duplicates.append(unit[1])
            self.reports.append(unit[1])
        elif any(work.no in self.dead for work in unit.files):
            drop_staged(self.scratch, unit)  # its live files' part is staged again
            keep = {work.no for work in unit.files if work.no not in self.dead}
            if keep:
                self._write(files_of(unit, keep))
        else:
            self._write(unit)

    def _write(self, batch: Batch) -> None:
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
            # `ending` is cleared only once every file is reported done: an interrupt in between
            # still finds them there, and `interrupted` asks the store whether they were committed
            for work in self.ending:
                self._done(work.report, work.size)
            self.ending, self.open, self.files = [], [], {}
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
            raise StoreError(f"{who}, the store could not be written ({first_line(exc)}); "
                             f"the files before {them} are stored") from None
        for work in files:
            if len(files) > 1 and not any(b.streamed for b in batches):
                self._retry_alone(work, batches, exc)
            else:
                self._fail(work, _memory_message(work, exc))

    def _retry_alone(self, work: File, batches: list[Batch], first: duckdb.Error) -> None:
        alone = [files_of(b, {work.no}) for b in batches if work in b.files]
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
                                 f"({first_line(exc)})") from None
            self._fail(work, _memory_message(work, exc))
            return
        self._done(work.report, work.size)

    def _fail(self, work: File, message: str) -> None:
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
        """Roll back what is open; the one-line summary of what was completed (docs/trace-format.md §6).

        The files of the open transaction that the store holds count as done: the interrupt may
        land after their commit completed and before they were reported.
        """
        ending = self.ending
        self._rollback()
        if ending:
            rows = self.con.execute(load_sql("ingest/committed"), {
                "hashes": [w.source.content_hash for w in ending], "ingested_at": self.ingested_at}).fetchall()
            committed = {row[0] for row in rows}
            reported = {id(r) for r in self.reports}
            self.reports.extend(w.report for w in ending
                                if w.source.content_hash in committed and id(w.report) not in reported)
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

    def _insert_sources(self, ending: list[File]) -> None:
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
            # read again (--replace), a record already stored as it is is skipped, yet the file
            # holds it: a later run's "skipped (already ingested)" counts it
            "episodes": [w.report.added + (w.report.skipped if self.replace else 0) for w in ending],
            "quarantined": [w.report.quarantined for w in ending],
            "ingested_at": [self.ingested_at] * len(ending),
            "file_size": [w.source.stat[0] if w.source.stat else None for w in ending],
            "file_mtime_ns": [w.source.stat[1] if w.source.stat else None for w in ending],
            "unread": [json_text(w.report.unread, sort_keys=True) if w.report.unread else None
                       for w in ending],
        })

    def _load_batch(self, batch: Batch) -> None:
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

    def _stage(self, batch: Batch, by_no: dict[int, File]) -> list[tuple[int, int, str, str | None]]:
        if batch.steps_schema is None:  # not staged ahead (a part of a batch, or staging it failed there)
            self.stager.stage(batch)
        try:
            return self._staged(batch, by_no)
        finally:
            drop_staged(self.scratch, batch)

    def _staged(self, batch: Batch, by_no: dict[int, File]) -> list[tuple[int, int, str, str | None]]:
        scratch = self.scratch
        scratch.execute(f"CREATE OR REPLACE TEMP VIEW stage_steps AS FROM {batch.steps_schema}.stage_steps")
        scratch.register("stage_raw", batch.table)
        run_script(scratch, "ingest/stage")
        scratch.unregister("stage_raw")
        run_script(scratch, "ingest/decide", {"replace": self.replace})
        rejected = []
        replaced = []
        decisions = scratch.execute(
            "SELECT line, file_no, src_line, eid, action, reason, first_line, other_file FROM stage_decide "
            "WHERE action <> 'add'"
        ).fetchall()
        for line, no, src_line, eid, action, reason, earlier_line, other_file in decisions:
            raw = raw_text(batch.canonical[line])
            if action == "bad":
                rejected.append((no, src_line, reason, raw))
            elif action == "skip" and other_file and merges_files(by_no[no].format):
                by_no[no].report.merged += 1
            elif action == "skip":
                by_no[no].report.skipped += 1
            elif action == "conflict":
                rejected.append((no, src_line, _conflict_reason(eid, by_no[no].format), raw))
            elif action == "conflict_file":
                rejected.append((no, src_line, f"episode_id {eid!r} appears earlier in this file "
                                 f"(line {earlier_line}) with different content", raw))
            elif action == "replace":
                replaced.append(eid)
        if replaced:
            run_script(self.con, "ingest/replace", {"replaced": replaced})
        run_script(scratch, "ingest/pairs")
        self._pair_sequentially()
        for table in ROW_TABLES:
            statement, params = _bound(f"ingest/rows/{table}", {"ingested_at": self.ingested_at,
                                                                 **self.fill.params()})
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


def _memory_message(work: File, exc: duckdb.Error) -> str:
    return (f"{work.source.uri}: not loaded, DuckDB ran out of memory ({first_line(exc)}); "
            "raise TRACELAB_MEMORY_LIMIT or split the file")


def _out_of_memory(exc: duckdb.Error) -> bool:
    return isinstance(exc, duckdb.OutOfMemoryException) or "out of memory" in str(exc).lower()


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


SPLIT_TRACE_FORMATS = frozenset({"langsmith"})
"""Formats whose episode (a trace) can be exported over several files: a later file that brings
more of a stored trace says how to store it whole."""


def _conflict_reason(eid: str, fmt: str) -> str:
    """Why an episode whose id is stored with other content is not stored, and what to do."""
    if fmt in SPLIT_TRACE_FORMATS:
        return (f"episode_id {eid!r} is already stored with other runs of its trace: put every file "
                "of the trace in one folder and ingest the folder with --replace to store it whole")
    return f"episode_id {eid!r} is already stored with different content (use --replace to replace it)"
