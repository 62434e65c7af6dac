"""Where `tracelab check` of benchmarks/suite.yaml spends its time: per SQL statement, per step.

    .venv/bin/python benchmarks/check_profile.py [--episodes 1000000] [--no-save] [--out FILE]

Checks the store of `make bench`'s corpus of that size (benchmarks/work/check-corpus-N-7.duckdb,
ingested once) in this process, saving the verdicts (a copy of the store is made first, untimed,
so that every profile starts from the same store). Every SQL statement the engine runs is
timed with the file (and statement number) it comes from, and so is every Python step around
them: fetching the verdict rows, naming them, grouping them into case verdicts, saving them.
Per line: wall seconds, CPU of the calling thread (Python, and DuckDB's work done in that thread:
DuckDB runs a query on it as one of its workers), and CPU of DuckDB's other threads (process
CPU less the calling thread's) while it ran.
"""
from __future__ import annotations

import argparse
import collections
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ROOT, WORK, copied_store, corpus, fresh, tracelab  # noqa: E402

SUITE = ROOT / "suite.yaml"


def process_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class Clock:
    """Wall, calling-thread CPU and DuckDB-thread CPU per labelled step."""

    def __init__(self) -> None:
        self.spent: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0, 0.0, 0])
        self.order: list[str] = []
        self.depth = 0

    def timed(self, label: str, function: Any, *args: Any, **kwargs: Any) -> Any:
        key = ("  " * self.depth) + label
        if key not in self.spent:
            self.order.append(key)
        wall, thread, process = time.perf_counter(), time.thread_time(), process_cpu()
        self.depth += 1
        try:
            return function(*args, **kwargs)
        finally:
            self.depth -= 1
            own = time.thread_time() - thread
            row = self.spent[key]
            row[0] += time.perf_counter() - wall
            row[1] += own
            row[2] += process_cpu() - process - own
            row[3] += 1

    def wrap(self, label: str, function: Any) -> Any:
        def run(*args: Any, **kwargs: Any) -> Any:
            return self.timed(label, function, *args, **kwargs)
        return run


def sql_label(query: str) -> str:
    """The sql/ file (and statement number) a query comes from."""
    from tracelab.sqlfiles import load_sql, sql_dir

    body = query.strip()
    for path in sorted((sql_dir() / "engine" / "assertions").glob("*.sql")):
        name = f"engine/assertions/{path.stem}"
        text = load_sql(name)
        if body == text.strip() or text.strip() in body:
            return f"sql {path.stem}"
        if body in text:
            statements = [s for s in text.split(";\n") if s.strip()]
            if len(statements) > 1:
                for no, statement in enumerate(statements):
                    if body in statement or statement.strip() in body:
                        return f"sql {path.stem}[{no}]"
            return f"sql {path.stem}"
    return "sql: " + " ".join(body.split())[:50]


class TimedConnection:
    """A DuckDB connection whose execute() is timed per statement."""

    def __init__(self, con: Any, clock: Clock) -> None:
        self._con, self._clock = con, clock

    def execute(self, query: str, *args: Any, **kwargs: Any) -> Any:
        return self._clock.timed(sql_label(query), self._con.execute, query, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._con, name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=1_000_000)
    parser.add_argument("--no-save", action="store_true", help="check without saving the verdicts")
    parser.add_argument("--out", type=Path, help="also write the profile (Markdown) to this file")
    parser.add_argument("--store", type=Path, help="profile a copy of this store instead of the corpus's")
    parser.add_argument("--since", help="profile `check --since RUN` (with --store: a store holding run RUN)")
    args = parser.parse_args()

    if args.store is not None:
        source = args.store
    else:
        path = corpus(args.episodes)
        source = WORK / f"check-{path.stem}.duckdb"
        if not source.exists():
            subprocess.run(tracelab("ingest", str(path), "--store", str(source), "--quiet"), check=True,
                           stdout=subprocess.DEVNULL)
    store_path = copied_store(source, WORK / "check-profile.duckdb")

    import tracelab.engine.evaluate as evaluate
    import tracelab.results.check as check_module
    import tracelab.results.saved as saved
    import tracelab.results.summaries as summaries
    from tracelab.store import open_store

    clock = Clock()
    evaluate._fetch = clock.wrap("python: fetch rows (_fetch)", evaluate._fetch)
    check_module.previous_run = clock.wrap("the earlier check's run (previous_run)", check_module.previous_run)
    evaluate._named = clock.wrap("python: name the rows (_named)", evaluate._named)
    evaluate.summarize = clock.wrap("python: case verdicts (summarize)", evaluate.summarize)
    evaluate._select = clock.wrap("select runs (_select)", evaluate._select)
    evaluate._run_families = clock.wrap("families (_run_families)", evaluate._run_families)
    evaluate.validate_calls = clock.wrap("python: args_valid schemas", evaluate.validate_calls)
    check_module._save = clock.wrap("save (_save)", check_module._save)
    saved.view_rows = clock.wrap("python: view rows (view_rows)", saved.view_rows)
    check_module._insert_frame = clock.wrap("insert rows (_insert_frame)", check_module._insert_frame)
    summaries.saved_summaries = clock.wrap("the earlier check's summaries (saved_summaries)",
                                           summaries.saved_summaries)
    summaries.continued = clock.wrap("python: merge the summaries (continued)", summaries.continued)
    summaries.summaries_of = clock.wrap("python: summaries (summaries_of)", summaries.summaries_of)
    summaries.view_rows_of = clock.wrap("python: view rows (view_rows_of)", summaries.view_rows_of)
    summaries.save_summaries = clock.wrap("save the summaries (save_summaries)", summaries.save_summaries)

    wall, cpu, main_cpu = time.perf_counter(), process_cpu(), time.thread_time()
    store = clock.timed("open the store", open_store, store_path)
    raw = store.con
    store.con = TimedConnection(raw, clock)  # type: ignore[assignment]
    # the rows the text report reads (what `tracelab check` asks for without --format json, ...)
    run = clock.timed("check, all", check_module.check, store, SUITE, save=not args.no_save, since=args.since,
                      rows="none")
    store.con = raw
    # DuckDB checkpoints what the check saved into the store file when it closes
    clock.timed("close the store (checkpoint)", store.close)
    wall, cpu, main_cpu = time.perf_counter() - wall, process_cpu() - cpu, time.thread_time() - main_cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    fresh(store_path)

    lines = [
        f"check{' --since' if args.since else ''} of {SUITE.name} over {run.result.summary.runs:,} runs "
        f"({run.result.summary.results:,} verdicts, "
        f"saved: {run.saved}), {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at the end",
        "",
        f"wall {wall:.2f} s; CPU {cpu:.2f} s: calling thread {main_cpu:.2f}, DuckDB's other threads "
        f"{cpu - main_cpu:.2f}; peak RSS {peak:.0f} MiB",
        "",
        "| what | wall s | calling thread CPU s | DuckDB's other threads CPU s | calls |",
        "|---|---:|---:|---:|---:|",
    ]
    for label in clock.order:
        w, c, d, n = clock.spent[label]
        if w >= 0.01:
            indent = "&nbsp;&nbsp;" * ((len(label) - len(label.lstrip())) // 2)
            lines.append(f"| {indent}{label.strip()} | {w:.2f} | {c:.2f} | {d:.2f} | {n} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
