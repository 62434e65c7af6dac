"""Check: `tracelab check` of benchmarks/suite.yaml vs a per-episode Python evaluator (pyeval.py).

Both sides are timed producing the same artefact, the verdict rows as Parquet:
tracelab through its library (`tracelab.results.check.check(store, suite, save=False)`,
then `write_parquet`), pyeval from the JSON Lines file. Each is a fresh
subprocess, so the figure is what a user waits for (interpreter start and
imports included). The CLI (`check --format json --all-results`, which also
renders every row as indented JSON) is timed as a secondary figure. The two
verdict sets must be identical before any figure is reported (a mismatch exits
non-zero with a sample of the differing rows). Stores are ingested once, untimed,
and cached in benchmarks/work.

`scaling` times the same library check at several corpus sizes and fits the
exponent of time over size; `memory` is the peak RSS of ingest and check at the
largest size, with DuckDB's memory_limit set (the store then spills to disk).
"""
from __future__ import annotations

import math
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

import polars as pl
from common import ROOT, WORK, Run, alternating, corpus, fastest, fresh, measure, python, tracelab

from tracelab.store import DEFAULT_MEMORY_LIMIT
from tracelab.suite import load_suite

SUITE = ROOT / "suite.yaml"
PYEVAL = ROOT / "pyeval.py"
TARGET = 30.0
"""tracelab check should be at least this many times faster than pyeval (issue 6)."""
EXPONENT_TARGET = 1.1
"""Check time should grow no faster than size ** 1.1."""
RSS_TARGET_MIB = 4096.0
"""At the largest size, ingest and check each stay under 4 GiB of peak RSS."""
MEMORY_LIMIT = os.environ.get("TRACELAB_MEMORY_LIMIT", DEFAULT_MEMORY_LIMIT)
"""DuckDB's memory_limit for every measured command: the store's default unless set."""
SCALING = (10_000, 100_000, 1_000_000)
REPEAT = 2
"""Timed runs per side of the comparison, taken in turn; the fastest counts (the machine is shared)."""
BYTES_PER_EPISODE = 10_000
"""Disk needed per episode: the corpus (~3.5 kB), its store (~0.5 kB) and DuckDB's spill files."""
CORPUS_BYTES_PER_EPISODE = 3_500
KEYS = ["case_id", "assertion_id", "episode_id"]
ENV = {"TRACELAB_MEMORY_LIMIT": MEMORY_LIMIT}

CHECK_TO_PARQUET = (
    "import sys\n"
    "from tracelab.results.check import check\n"
    "check(sys.argv[1], sys.argv[2], save=False).verdicts.write_parquet(sys.argv[3])\n"
)
"""What a library user runs: check the suite, keep the verdict rows (argv: store suite out)."""


def run(episodes: int) -> dict[str, object]:
    """tracelab vs pyeval at `episodes`, both producing the verdicts as Parquet."""
    path = corpus(episodes)
    store = ingested(path)
    tl_out, py_out = WORK / "check-tracelab.parquet", WORK / "check-pyeval.parquet"
    hand_out = WORK / "check-handwritten.parquet"
    runs = alternating({
        "ours": lambda: check_library(store, tl_out),
        "pyeval": lambda: measure([sys.executable, str(PYEVAL), str(SUITE), str(path), "--out", str(py_out)],
                                  env=ENV),
        "hand": lambda: measure([sys.executable, str(ROOT / "handwritten.py"), str(store), "--out",
                                 str(hand_out)], env=ENV),
    }, REPEAT)
    ours, baseline, hand = fastest(runs["ours"]), fastest(runs["pyeval"]), fastest(runs["hand"])
    verdicts = pl.read_parquet(tl_out)
    compare(verdicts, pl.read_parquet(py_out))
    compare(verdicts, pl.read_parquet(hand_out))
    # exit 1 only says that some case failed: the suite is made to fail on the corpus's flaws
    cli = measure(tracelab("check", str(SUITE), "--store", str(store), "--no-save", "--format", "json",
                           "--all-results", "--output", str(WORK / "check-tracelab.json")),
                  env=ENV, ok_exit=(0, 1))
    return {
        "episodes": episodes,
        "suite": SUITE.name,
        "cases": len(load_suite(SUITE).cases),
        "case_assertions": verdicts.select("case_id", "assertion_id").n_unique(),
        "verdicts": verdicts.height,
        "failed": int((~verdicts["passed"]).sum()),
        "verdicts_identical": True,
        "tracelab_check": ours,
        "tracelab_cli_json": cli,
        "pyeval": baseline,
        "all_runs_s": {side: [r.seconds for r in measured] for side, measured in runs.items()},
        "ratio": round(baseline.seconds / ours.seconds, 2),
        "target": TARGET,
        "handwritten_sql": hand,
        "ratio_vs_handwritten": round(ours.seconds / hand.seconds, 2),
        "target_vs_handwritten": 1.3,
    }


def scaling(sizes: tuple[int, ...] = SCALING) -> tuple[dict[str, object], dict[str, object] | None]:
    """Library check time at each size that fits on disk with the fitted exponent, and the
    peak RSS of ingest and check at the largest size (None when it did not fit)."""
    points: dict[int, Run] = {}
    skipped: dict[int, str] = {}
    memory: dict[str, object] | None = None
    for n in sizes:
        reason = no_room(n)
        if reason:
            print(f"check scaling: skipping {n:,} episodes: {reason}", flush=True)
            skipped[n] = reason
            continue
        path = corpus(n)
        if n == max(sizes):
            # the largest store is ingested fresh: its ingest is the memory figure
            store = fresh(WORK / f"check-{path.stem}.duckdb")
            ingest = measure(tracelab("ingest", str(path), "--store", str(store), "--quiet"), env=ENV)
        else:
            store = ingested(path)
        points[n] = check_library(store, WORK / f"check-tracelab-{n}.parquet")
        print(f"check scaling: {n:,} episodes in {points[n].seconds} s "
              f"(peak RSS {points[n].peak_rss_mib} MiB)", flush=True)
        if n == max(sizes):
            memory = {"episodes": n, "memory_limit": MEMORY_LIMIT, "ingest": ingest,
                      "check": points[n], "target_mib": RSS_TARGET_MIB}
    sizes_run = sorted(points)
    return {
        "points": {str(n): points[n] for n in sizes_run},
        "exponent": fitted_exponent([(n, points[n].seconds) for n in sizes_run]),
        "target": EXPONENT_TARGET,
        "skipped": {str(n): why for n, why in skipped.items()},
    }, memory


def fitted_exponent(points: list[tuple[int, float]]) -> float | None:
    """The slope of log(seconds) over log(size), least squares; None with fewer than 2 points."""
    if len(points) < 2:
        return None
    fit = statistics.linear_regression([math.log(n) for n, _ in points],
                                       [math.log(s) for _, s in points])
    return round(fit.slope, 3)


def no_room(episodes: int) -> str | None:
    """Why a corpus of that size cannot be built here, or None when the disk has room."""
    if (WORK / f"corpus-{episodes}-7.jsonl").exists():
        needed = episodes * (BYTES_PER_EPISODE - CORPUS_BYTES_PER_EPISODE)
    else:
        needed = episodes * BYTES_PER_EPISODE
    WORK.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(WORK).free
    if free < needed:
        return f"{free / 1e9:.1f} GB free in {WORK}, {needed / 1e9:.1f} GB needed"
    return None


def ingested(path: Path) -> Path:
    """The store of `path`, ingested once: re-ingesting a recorded file adds nothing."""
    store = WORK / f"check-{path.stem}.duckdb"
    subprocess.run(tracelab("ingest", str(path), "--store", str(store), "--quiet"), check=True,
                   stdout=subprocess.DEVNULL)
    return store


def check_library(store: Path, out: Path) -> Run:
    """One timed library check of the suite, writing the verdict rows to `out`."""
    return measure(python(CHECK_TO_PARQUET) + [str(store), str(SUITE), str(out)], env=ENV)


def differences(ours: pl.DataFrame, theirs: pl.DataFrame) -> pl.DataFrame:
    """Rows whose (passed, exercised) differ, or that only one side has (its columns then null)."""
    columns = [*KEYS, "passed", "exercised"]
    joined = ours.select(columns).join(theirs.select(columns), on=KEYS, how="full", coalesce=True,
                                       suffix="_pyeval")
    return joined.filter(
        ~pl.col("passed").eq_missing(pl.col("passed_pyeval"))
        | ~pl.col("exercised").eq_missing(pl.col("exercised_pyeval"))
    ).sort(KEYS)


def compare(ours: pl.DataFrame, theirs: pl.DataFrame) -> None:
    """Exit non-zero, showing a sample, unless both verdict sets are identical."""
    diff = differences(ours, theirs)
    if diff.height:
        with pl.Config(tbl_rows=20, tbl_cols=-1, fmt_str_lengths=40, tbl_width_chars=200):
            print(f"check: tracelab and pyeval disagree on {diff.height:,} of "
                  f"{max(ours.height, theirs.height):,} verdicts, for example:\n{diff.head(20)}",
                  file=sys.stderr)
        raise SystemExit(1)
