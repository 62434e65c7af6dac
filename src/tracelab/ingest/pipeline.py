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

A batch's steps, the bulk of its staging, are staged ahead in the reading thread (`Stager`), into
a schema of their own in an in-memory database attached for the ingest: the writer finds them
there (no copy) while the reader parses and stages the next batch, so that the two threads share
the work instead of the writer doing all of the SQL.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Sequence

import duckdb

from tracelab.errors import StoreError, first_line, interruptible, is_interrupt
from tracelab.formats import get_format
from tracelab.ingest.batches import FileReport, IngestReport
from tracelab.ingest.inputs import Input, scan_inputs
from tracelab.ingest.parse_pool import ParsePool
from tracelab.ingest.reader import Reader, in_background
from tracelab.ingest.staging import Stager, collector_paused, staged_ahead, staging_connection, staging_database
from tracelab.ingest.writer import EpisodeFill, Writer
from tracelab.sqlfiles import load_sql


def ingest_paths(
    con: duckdb.DuckDBPyConnection,
    paths: Sequence[str | os.PathLike[str] | Input],
    *,
    format: str = "auto",
    replace: bool = False,
    progress: Callable[[FileReport, int], None] | None = None,
    workers: int = 0,
    before_write: Callable[[], None] | None = None,
    fill: EpisodeFill | None = None,
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
        workers: processes that parse once the input is large (`tracelab.ingest.parse_pool`); 0 or 1
            parses in a thread of this process. `tracelab ingest` uses every CPU
            (`TRACELAB_WORKERS`). A library caller that asks for workers must run from a script
            whose top-level code is under ``if __name__ == "__main__":``, as with any
            `multiprocessing` code: a worker imports the caller's main module.
        before_write: called once, before the first write into the store (`Store._verify`); an
            ingest that writes nothing (every file already ingested) never calls it.
        fill: the agent and model to set on the episodes added where the record names none, and
            tags to add to them (`ingest --agent/--model/--tag`); stored episodes are left as they are.

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
    with staging_connection(con) as scratch, staging_database(con) as steps_db, collector_paused():
        lookup = interruptible(con.cursor())
        ahead, behind = Stager(con, steps_db, "ahead"), Stager(con, steps_db, "writer")
        writer = Writer(con, scratch, behind, replace, progress, before_write, fill)
        reader = Reader(lookup, inputs, forced, replace, parser)
        try:
            for unit in in_background(staged_ahead(reader.units(), ahead)):
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
    report = IngestReport(sorted(reports, key=lambda r: reader.order[id(r)]))
    if report.added >= COMPACT_MIN_RUNS:
        try:
            compact(con)
        except BaseException as exc:  # every file is stored: only the merging stopped
            if is_interrupt(exc):
                raise writer.interrupted(len(inputs)) from None
            if isinstance(exc, duckdb.Error):  # a full disk
                raise StoreError(f"every file is stored, but the store could not be checkpointed "
                                 f"({first_line(exc)}); free some space and open it again") from None
            raise
    return report


COMPACT_ROUNDS = 4
"""Checkpoints `compact` runs at most (at 1M runs two merged what there was to merge)."""
COMPACT_MIN_RUNS = 50_000
"""An ingest that adds fewer runs leaves its few part-filled row groups to the next checkpoint:
counting the row groups alone costs `compact` about 0.35 s in a store of 1M runs, more than a
checkpoint spends merging a small ingest's."""


def compact(con: duckdb.DuckDBPyConnection) -> None:
    """Merge the part-filled row groups the ingest's batches left in the run tables, now rather than
    in the next write's checkpoint.

    Each batch appends its rows as row groups of their own, the last one part-filled (1M runs left
    `steps` in 223 row groups where 164 hold it). DuckDB merges them in the vacuum of a checkpoint,
    a round of merges per checkpoint, and only in a checkpoint that has something to write: left
    to themselves, they made the first two checks that saved into the store pay 4.1 s and 2.1 s
    more to close it. A checkpoint here has a comment to write, and runs until the row groups
    stop falling. What it merges was committed before: an interrupt here loses nothing."""
    rounds = load_sql("ingest/row_groups")
    [(before,)] = con.execute(rounds).fetchall()
    for _ in range(COMPACT_ROUNDS):
        # a write for the checkpoint to make (one that writes nothing is skipped, vacuum and all)
        con.execute("COMMENT ON TABLE tracelab_meta IS 'the store''s schema version'")
        con.execute("CHECKPOINT")
        [(after,)] = con.execute(rounds).fetchall()
        if after == before:
            return
        before = after
