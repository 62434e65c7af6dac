"""One run per file: a folder of single-run native files vs the same runs in one file.

Production corpora arrive as one file per run (issue 11). The folder holds exactly the lines of
the one-file corpus, one per file, in folders of 1,000 (as trace stores shard them). Both sides
are measured in turn, ROUNDS times each, each run into a fresh store; then the folder is ingested
again into the store of its last run (a nightly re-scan: every file already ingested).
"""
from __future__ import annotations

from pathlib import Path

from common import WORK, alternating, corpus, fastest, fresh, measure, tracelab

ROUNDS = 2
PER_FOLDER = 1000
TARGET_RATIO = 1.5
TARGET_RERUN = 0.10


def per_file_corpus(episodes: int) -> Path:
    """The corpus of `episodes` runs, one file per run, generated once and cached."""
    folder = WORK / f"per-file-{episodes}"
    done = folder / ".complete"
    if not done.exists():
        print(f"splitting {episodes:,} episodes into one file each -> {folder}", flush=True)
        with corpus(episodes).open("rb") as fh:
            for number, line in enumerate(fh):
                shard = folder / f"{number // PER_FOLDER:04d}"
                if number % PER_FOLDER == 0:
                    shard.mkdir(parents=True, exist_ok=True)
                (shard / f"run-{number:06d}.jsonl").write_bytes(line)
        done.write_text("")
    return folder


def run(episodes: int) -> dict[str, object]:
    one_file = corpus(episodes)
    folder = per_file_corpus(episodes)
    store = WORK / "per-file.duckdb"
    runs = alternating({
        "one_file": lambda: measure(tracelab("ingest", str(one_file), "--store",
                                             str(fresh(WORK / "one-file.duckdb")), "--quiet")),
        "per_file": lambda: measure(tracelab("ingest", str(folder), "--store", str(fresh(store)), "--quiet")),
    }, ROUNDS)
    rerun = measure(tracelab("ingest", str(folder), "--store", str(store), "--quiet"))
    one, per = fastest(runs["one_file"]), fastest(runs["per_file"])
    return {
        "episodes": episodes,
        "files": episodes,
        "one_file": one,
        "per_file": per,
        "rerun": rerun,
        "all_runs_s": {side: [r.seconds for r in measured] for side, measured in runs.items()},
        "ratio": round(per.seconds / one.seconds, 2),
        "files_per_s": round(episodes / per.seconds),
        "rerun_share": round(rerun.seconds / per.seconds, 3),
        "target_ratio": TARGET_RATIO,
        "target_rerun": TARGET_RERUN,
    }


def summary(figures: dict) -> str:
    return (f"one run per file: {figures['ratio']}x the one-file time ({figures['files']:,} files, "
            f"{figures['files_per_s']:,} files/s; one file {figures['one_file'].seconds} s, folder "
            f"{figures['per_file'].seconds} s); re-run over the folder {figures['rerun'].seconds} s = "
            f"{figures['rerun_share']:.1%} of the first")


def row(figures: dict) -> str:
    """The BENCHMARKS.md row."""
    one, per, again = figures["one_file"], figures["per_file"], figures["rerun"]
    runs = figures["all_runs_s"]
    return (f"| ingest, one run per file vs the same runs in one file | {figures['files']:,} single-run "
            f"native files (folders of {PER_FOLDER:,}) | {per.seconds} s ({figures['files_per_s']:,} files/s, "
            f"peak RSS {per.peak_rss_mib} MiB; runs {' / '.join(f'{s} s' for s in runs['per_file'])}); "
            f"re-run over the ingested folder {again.seconds} s ({figures['rerun_share']:.1%} of the first) "
            f"| {one.seconds} s (runs {' / '.join(f'{s} s' for s in runs['one_file'])}) "
            f"| {figures['ratio']}x | <= {figures['target_ratio']:g}x; re-run <= {figures['target_rerun']:.0%} |")
