"""Parsing for ingest's reading thread: in that thread at first, in worker processes once the
input is large enough to pay for them.

Parsing and preparing records (`tracelab.ingest.prepare`) is Python work that holds the GIL: in one
thread it bounds ingest at one core whatever the machine has, and a folder of small files pays
for every file's detection and parse there. `ParsePool` hands that work to worker processes
in jobs (many small files, or a run of a large file's lines), a few jobs ahead of the reading
thread, and gives the results back in input order, so that what ingest stores is the same
with and without workers.

The pool starts only after `POOL_AFTER_BYTES` of input were parsed in the thread: an ingest
of a few files never pays for starting processes. The library parses in the thread unless
asked (`ingest_paths(workers=...)`: a worker process imports the caller's main module, as
`multiprocessing` does); `tracelab ingest` asks for `worker_count()`: `TRACELAB_WORKERS`, else
the CPUs this process may use (0 or 1: parse in the thread only). A worker
that dies (killed, out of memory) ends the pool: its jobs, and every later one, are parsed in
the thread instead, so nothing is lost.
"""
from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from tracelab.errors import UsageError, out_of_file_handles
from tracelab.formats.source import Source
from tracelab.ingest.prepare import Entry, FileParse, parse_files, parse_lines

POOL_AFTER_BYTES = 32 << 20
"""Input parsed in the reading thread before the workers start."""
JOB_BYTES = 4 << 20
"""Input bytes per job (a job is at least one file, or one line)."""
JOB_FILES = 512
"""Small files per job at most: each file's result travels back with its job."""
AHEAD = 2
"""Jobs in flight per worker: enough to keep each busy, few enough to bound memory."""


MAX_WORKERS = 1024
"""The most worker processes `TRACELAB_WORKERS` may ask for (each one holds open files and a
share of memory; past a C int the executor cannot even be built)."""


def worker_count() -> int:
    """Workers to use: `TRACELAB_WORKERS`, else the CPUs this process may run on."""
    value = os.environ.get("TRACELAB_WORKERS", "").strip()
    if value:
        try:
            count = int(value)
        except ValueError:
            raise UsageError(f"TRACELAB_WORKERS must be a whole number, not {value!r}") from None
        if not 0 <= count <= MAX_WORKERS:
            raise UsageError(f"TRACELAB_WORKERS must be from 0 to {MAX_WORKERS}, not {count}")
        return count
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


class ParsePool:
    """Parse jobs for the reading thread, in order; in worker processes once worth it."""

    def __init__(self, forced: str | None, workers: int) -> None:
        self.forced = forced
        self.workers = workers
        self.parsed_inline = 0
        self._pool: ProcessPoolExecutor | None = None

    def files(self, items: Sequence[tuple[int, Source]]) -> Iterator[tuple[int, FileParse]]:
        """`parse_file` of each file read whole, in order: ``(no, result)``."""

        def jobs() -> Iterator[tuple[list[int], int, Callable[..., Any], tuple[Any, ...]]]:
            job: list[tuple[int, Source]] = []
            size = 0
            for no, source in items:
                job.append((no, source))
                size += source.size
                if size >= JOB_BYTES or len(job) >= JOB_FILES:
                    yield self._files_job(job, size)
                    job, size = [], 0
            if job:
                yield self._files_job(job, size)

        for nos, results in self._in_order(jobs()):
            yield from zip(nos, results, strict=True)

    def _files_job(self, job: list[tuple[int, Source]], size: int,
                   ) -> tuple[list[int], int, Callable[..., Any], tuple[Any, ...]]:
        files = [(s.location, s.uri, s.data) for _, s in job]
        return [no for no, _ in job], size, parse_files, (files, self.forced)

    def lines(self, format: str, source: Source) -> Iterator[Entry]:
        """The entries of a large file's lines (a format with ``line_episodes``), in order.

        Read errors (`DataError`: the file changed, or cannot be read to its end) are raised here,
        in the reading thread, as they would be without workers.
        """

        def jobs() -> Iterator[tuple[None, int, Callable[..., Any], tuple[Any, ...]]]:
            block: list[tuple[int, bytes]] = []
            size = 0
            for line in source.lines():
                block.append(line)
                size += len(line[1])
                if size >= JOB_BYTES:
                    yield None, size, parse_lines, (format, block)
                    block, size = [], 0
            if block:
                yield None, size, parse_lines, (format, block)

        for _, entries in self._in_order(jobs()):
            yield from entries

    def close(self) -> None:
        """Stop the workers; jobs not started are dropped (a worker finishes the job it runs)."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    # -- the pipeline --

    def _in_order(self, jobs: Iterator[tuple[Any, int, Callable[..., Any], tuple[Any, ...]]],
                  ) -> Iterator[tuple[Any, Any]]:
        """``(context, result)`` of each job, in order, up to `AHEAD` per worker in flight."""
        pending: deque[tuple[Any, Callable[..., Any], tuple[Any, ...], Future[Any]]] = deque()
        try:
            for context, size, function, args in jobs:
                pool = self._pool_for(size)
                if pool is None:
                    while pending:
                        yield self._result(*pending.popleft())
                    yield context, function(*args)
                    continue
                try:
                    future = pool.submit(function, *args)
                except BrokenProcessPool:
                    self._broken()
                    while pending:
                        yield self._result(*pending.popleft())
                    yield context, function(*args)
                    continue
                pending.append((context, function, args, future))
                while len(pending) > AHEAD * self.workers:
                    yield self._result(*pending.popleft())
            while pending:
                yield self._result(*pending.popleft())
        finally:
            for *_, future in pending:
                future.cancel()

    def _result(self, context: Any, function: Callable[..., Any], args: tuple[Any, ...],
                future: Future[Any]) -> tuple[Any, Any]:
        try:
            return context, future.result()
        except BrokenProcessPool:
            self._broken()
            return context, function(*args)

    def _broken(self) -> None:
        """A worker died (killed, out of memory): parse in the thread from now on, losing nothing."""
        self.close()
        self.workers = 0

    def _pool_for(self, size: int) -> ProcessPoolExecutor | None:
        if self._pool is None and self.workers > 1:
            self.parsed_inline += size
            if self.parsed_inline > POOL_AFTER_BYTES:
                import multiprocessing

                _enough_file_handles(self.workers)
                # forkserver: workers are forked from a clean process, never from this one,
                # whose DuckDB and reading threads a fork would copy mid-flight
                context = multiprocessing.get_context("forkserver")
                context.set_forkserver_preload(["tracelab.ingest.prepare"])
                self._pool = ProcessPoolExecutor(self.workers, mp_context=context, initializer=_start_worker,
                                                 initargs=(os.getpid(),))
        return self._pool


HANDLES_PER_WORKER = 8
"""File handles the main process spends per worker (pipes, the forkserver's sockets), counted
with room to spare, plus HANDLES_BASE for DuckDB, the store and the files being read."""
HANDLES_BASE = 64


def _enough_file_handles(workers: int) -> None:
    """Refuse to start `workers` when the process may not open the handles they need: running
    out mid-way kills the forkserver, whose traceback no error line can hide.

    Raises:
        TracelabError: the one line of `errors.out_of_file_handles`.
    """
    import resource

    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft != resource.RLIM_INFINITY and soft < HANDLES_BASE + HANDLES_PER_WORKER * workers:
        raise out_of_file_handles("ingest")


def _start_worker(main_pid: int) -> None:
    """Ctrl-C reaches every process of the terminal's group: the main process handles it (rolls
    back, says what was done); a worker just stops when the pool shuts down. And a worker ends
    when the main process is gone (killed): it would otherwise wait forever to hand over a result
    nobody reads."""
    import signal
    import threading
    import time

    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def watch() -> None:
        while not _gone(main_pid):
            time.sleep(ORPHAN_CHECK_S)
        os._exit(1)

    threading.Thread(target=watch, name="tracelab-orphan-watch", daemon=True).start()


ORPHAN_CHECK_S = 0.5
"""How often a worker checks that the main process is still there."""


def _gone(pid: int) -> bool:
    """True when process `pid` has ended (a zombie waiting for its parent included)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, only not ours to signal
        return False
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] == b"Z"
    except (OSError, IndexError):
        return False


__all__ = ["POOL_AFTER_BYTES", "ParsePool", "worker_count"]
