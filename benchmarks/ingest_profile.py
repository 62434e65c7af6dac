"""Where `tracelab ingest` of one big native file spends its time: per SQL statement, per thread.

    .venv/bin/python benchmarks/ingest_profile.py [--episodes 100000] [--workers 0]

Runs the ingest in this process (the corpus of `make bench`, benchmarks/work/) with every SQL
statement of sql/ingest/ timed in the thread that runs it: the reading thread (parse, prepare,
stage a batch's steps ahead) and the writer (the rest of the staging, decide, pairs, the rows
handed over as Arrow and inserted, commit). Thread CPU is `time.thread_time`; DuckDB's own
threads are the process CPU left over. Workers (`--workers 2`) parse in other processes, whose
CPU this does not see.
"""
from __future__ import annotations

import argparse
import collections
import os
import resource
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import WORK, corpus, fresh  # noqa: E402


def process_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=0)
    args = parser.parse_args()

    import tracelab.ingest.batches as ingest_batches
    import tracelab.ingest.reader as ingest_reader
    import tracelab.ingest.staging as ingest_staging
    import tracelab.ingest.writer as ingest_writer
    from tracelab.sqlfiles import load_sql
    from tracelab.store import open_store

    spent: dict[tuple[str, str], list[float]] = collections.defaultdict(lambda: [0.0, 0.0, 0])
    threads: dict[str, float] = {}

    def record(what: str, wall: float, cpu: float) -> None:
        row = spent[(threading.current_thread().name, what)]
        row[0] += wall
        row[1] += cpu
        row[2] += 1

    def timed_script(con: Any, name: str, params: dict[str, Any] | None = None) -> None:
        for no, statement in enumerate(load_sql(name).split(";\n")):
            if not statement.strip() or all(ln.strip().startswith("--") or not ln.strip()
                                             for ln in statement.splitlines()):
                continue
            used = {k: v for k, v in (params or {}).items() if f"${k}" in statement}
            wall, cpu = time.perf_counter(), time.thread_time()
            con.execute(statement, used or None)
            record(f"{name}[{no}]", time.perf_counter() - wall, time.thread_time() - cpu)

    def timed(function: Any, what: str) -> Any:
        def run(*a: Any, **k: Any) -> Any:
            wall, cpu = time.perf_counter(), time.thread_time()
            try:
                return function(*a, **k)
            finally:
                record(what, time.perf_counter() - wall, time.thread_time() - cpu)
        return run

    ingest_writer.run_script = timed_script  # type: ignore[assignment]
    ingest_staging.run_script = timed_script  # type: ignore[assignment]
    pairing = ingest_writer.Writer._pair_sequentially
    ingest_writer.Writer._pair_sequentially = timed(pairing, "python: sequential pairing")
    ingest_writer.Writer._write = timed(ingest_writer.Writer._write, "batch, all (writer)")
    ingest_batches.Batch.sealed = timed(ingest_batches.Batch.sealed, "python: batch to Arrow")
    bound = ingest_writer._bound
    handed: dict[str, tuple[str, float, float]] = {}

    def rows_bound(name: str, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        handed["rows"] = (name, time.perf_counter(), time.thread_time())
        return bound(name, params)

    read_once = ingest_writer._read_once

    def rows_read(table: Any) -> Any:
        name, wall, cpu = handed.pop("rows")
        record(f"{name} (to Arrow)", time.perf_counter() - wall, time.thread_time() - cpu)
        return read_once(table)

    ingest_writer._bound = rows_bound  # type: ignore[assignment]
    ingest_writer._read_once = rows_read  # type: ignore[assignment]
    background = ingest_reader.in_background

    def in_background(units: Any, *args: Any) -> Any:
        def counted() -> Any:
            yield from units
            threads[threading.current_thread().name] = time.thread_time()
        return background(counted(), *args)

    ingest_reader.in_background = in_background  # type: ignore[assignment]

    path = corpus(args.episodes)
    store_path = fresh(WORK / "profile.duckdb")
    wall, cpu, main_cpu = time.perf_counter(), process_cpu(), time.thread_time()
    with open_store(store_path) as store:
        report = store.ingest([path], workers=args.workers)
    wall, cpu, main_cpu = time.perf_counter() - wall, process_cpu() - cpu, time.thread_time() - main_cpu
    fresh(store_path)

    background_cpu = sum(threads.values())
    print(f"{report.added:,} episodes from {path.name} ({path.stat().st_size / 1e6:.0f} MB), workers={args.workers}, "
          f"{os.cpu_count()} CPUs")
    print(f"wall {wall:.2f} s; CPU {cpu:.2f} s: writer thread {main_cpu:.2f}, "
          + "".join(f"{name} {spent_cpu:.2f}, " for name, spent_cpu in sorted(threads.items()))
          + f"DuckDB's threads {cpu - main_cpu - background_cpu:.2f}")
    print(f"{'thread':16s} {'what':44s} {'wall s':>8s} {'cpu s':>8s} {'calls':>6s}")
    for (thread, what), (w, c, n) in sorted(spent.items(), key=lambda kv: (kv[0][0], -kv[1][0])):
        print(f"{thread:16s} {what:44s} {w:8.2f} {c:8.2f} {n:6d}")


if __name__ == "__main__":
    main()
