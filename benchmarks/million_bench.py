"""Check at 1M runs, verdicts saved (issue 27): vs benchmarks/handwritten.sql, and `check --since`.

`run` times, in turn, `check` of benchmarks/suite.yaml through the library with its verdicts
saved into the store (`tracelab.results.check.check(store, suite)`: what `tracelab check` does
before it prints) and handwritten.py over the same store. Each saving check starts from a copy of
the ingested store made untimed, so every run saves into the same store. The per-run evaluator
figure is pyeval's measured cost per run (the `check` section, at 100k) times the size.

`--since`: after a saved full check, 10,000 new runs (another seed of the generator) are
ingested into the copy; `check --since RUN` is timed against a full check of that store, in turn.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from common import ROOT, WORK, Run, alternating, copied_store, corpus, fastest, fresh, measure, python, tracelab

from tracelab.results.check import CHECK_MEMORY_LIMIT

SUITE = ROOT / "suite.yaml"
EPISODES = 1_000_000
NEW = 10_000
REPEAT = 2
TARGET_TIME_S = 20.0
TARGET_VS_HANDWRITTEN = 0.5
TARGET_SINCE = 0.10
RSS_TARGET_MIB = 4096.0

HAND_ENV = {"TRACELAB_MEMORY_LIMIT": CHECK_MEMORY_LIMIT}
"""handwritten.sql runs out of memory at 1M runs under the store's default 1 GB: it gets what the
check gets (results.check.CHECK_MEMORY_LIMIT)."""

CHECK_SAVED = (
    "import sys\n"
    "from tracelab.results.check import check\n"
    "since = sys.argv[3] if len(sys.argv) > 3 else None\n"
    "run = check(sys.argv[1], sys.argv[2], since=since, rows='none')\n"
    "assert run.saved\n"
)
"""A library check that saves its verdicts into the store (argv: store suite [since-run-id]), holding
the rows `tracelab check`'s text report reads (rows='none', as the CLI asks for it)."""


def ingested(path: Path) -> Path:
    """The store of `path`, ingested once (a re-run over a 1M-run file still reads all of it)."""
    store = WORK / f"check-{path.stem}.duckdb"
    if store.exists():
        return store
    subprocess.run(tracelab("ingest", str(path), "--store", str(store), "--quiet"), check=True,
                   stdout=subprocess.DEVNULL)
    return store


def copied(store: Path, name: str) -> Path:
    """A fresh copy of `store` (untimed)."""
    return copied_store(store, WORK / name)


def saved_check(store: Path, since: str | None = None) -> Run:
    return measure(python(CHECK_SAVED) + [str(store), str(SUITE), *([since] if since else [])])


def load() -> str:
    """The host's load averages (1, 5, 15 minutes): how shared the 2 CPUs were."""
    import os

    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def latest_run_id(store: Path) -> str:
    import duckdb

    with duckdb.connect(str(store), read_only=True) as con:
        return str(con.execute("SELECT run_id FROM check_runs ORDER BY started_at DESC LIMIT 1").fetchall()[0][0])


def run(episodes: int = EPISODES, pyeval_s_per_run: float | None = None, repeat: int = REPEAT) -> dict[str, object]:
    """Saved check vs handwritten.sql at `episodes`, then `--since` over `NEW` new runs."""
    store = ingested(corpus(episodes))
    load_before = load()
    hand_out = WORK / "million-handwritten.parquet"

    def ours() -> Run:
        return saved_check(copied(store, "million-saved.duckdb"))

    runs = alternating({
        "ours": ours,
        "hand": lambda: measure([sys.executable, str(ROOT / "handwritten.py"), str(store), "--out", str(hand_out)],
                                env=HAND_ENV),
    }, repeat)
    best, hand = fastest(runs["ours"]), fastest(runs["hand"])

    # --since: a saved full check, NEW new runs ingested, then --since vs a full check, in turn
    base = copied(store, "million-since.duckdb")
    saved_check(base)
    previous = latest_run_id(base)
    new = corpus(NEW, seed=8)
    subprocess.run(tracelab("ingest", str(new), "--store", str(base), "--quiet"), check=True,
                   stdout=subprocess.DEVNULL)
    grown = WORK / "million-since-base.duckdb"
    shutil.move(base, grown)

    def since() -> Run:
        return saved_check(copied(grown, "million-since.duckdb"), previous)

    def full() -> Run:
        return saved_check(copied(grown, "million-since.duckdb"))

    since_runs = alternating({"since": since, "full": full}, repeat)
    fresh(WORK / "million-since.duckdb")
    fresh(WORK / "million-saved.duckdb")
    fresh(grown)
    since_best, full_best = fastest(since_runs["since"]), fastest(since_runs["full"])
    result: dict[str, object] = {
        "episodes": episodes,
        "new": NEW,
        "load_before": load_before,
        "tracelab_saved": best,
        "handwritten_sql": hand,
        "ratio_vs_handwritten": round(best.seconds / hand.seconds, 2),
        "since": since_best,
        "full_after_new": full_best,
        "since_ratio": round(since_best.seconds / full_best.seconds, 3),
        "all_runs_s": {side: [r.seconds for r in measured]
                       for side, measured in {**runs, **since_runs}.items()},
        "targets": {"seconds": TARGET_TIME_S, "vs_handwritten": TARGET_VS_HANDWRITTEN,
                    "since": TARGET_SINCE, "rss_mib": RSS_TARGET_MIB},
    }
    result["load_after"] = load()
    if pyeval_s_per_run:
        result["per_run_evaluator_s"] = round(pyeval_s_per_run * episodes, 1)
    return result


def summary(m: dict) -> str:
    return (f"check at {m['episodes']:,}, saved: {m['tracelab_saved'].seconds} s (peak RSS "
            f"{m['tracelab_saved'].peak_rss_mib} MiB), {m['ratio_vs_handwritten']}x handwritten.sql "
            f"({m['handwritten_sql'].seconds} s); --since over {m['new']:,} new: {m['since'].seconds} s, "
            f"{m['since_ratio']:.1%} of the full check ({m['full_after_new'].seconds} s)")


def rows(m: dict) -> list[str]:
    """The BENCHMARKS.md rows of this benchmark."""
    ours, hand, t = m["tracelab_saved"], m["handwritten_sql"], m["targets"]
    per_run = (f"; a per-run evaluator at pyeval's measured cost per run: {m['per_run_evaluator_s']} s"
               if m.get("per_run_evaluator_s") else "")
    return [
        f"| `check` of benchmarks/suite.yaml, verdicts saved in the store, vs hand-written DuckDB SQL "
        f"(handwritten.sql to Parquet) | {m['episodes']:,} episodes | {ours.seconds} s (peak RSS "
        f"{ours.peak_rss_mib} MiB; runs {' / '.join(f'{s} s' for s in m['all_runs_s']['ours'])}) "
        f"| {hand.seconds} s (runs {' / '.join(f'{s} s' for s in m['all_runs_s']['hand'])}{per_run}) "
        f"| {m['ratio_vs_handwritten']}x the time (host load average {m['load_before']} before, "
        f"{m['load_after']} after) | <= {t['seconds']:g} s, <= {t['vs_handwritten']:g}x, "
        f"peak RSS < {t['rss_mib']:g} MiB |",
        f"| `check --since` a saved full check, {m['new']:,} new runs ingested, vs a full check of the "
        f"same store (both saved) | {m['episodes']:,} + {m['new']:,} episodes | {m['since'].seconds} s "
        f"(runs {' / '.join(f'{s} s' for s in m['all_runs_s']['since'])}) "
        f"| {m['full_after_new'].seconds} s (runs {' / '.join(f'{s} s' for s in m['all_runs_s']['full'])}) "
        f"| {m['since_ratio']:.1%} of the time | <= {t['since']:.0%} |",
    ]
