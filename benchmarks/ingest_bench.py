"""Ingest: `tracelab ingest` vs DuckDB's bare `read_json` of the same file into one table.

The two are measured in turn, ROUNDS times each, each run into a fresh database; the
fastest run of each side counts, and every run is kept in the results.
"""
from __future__ import annotations

from common import WORK, alternating, corpus, fastest, fresh, measure, python, tracelab

ROUNDS = 2
BARE = ("import duckdb, sys; con = duckdb.connect(sys.argv[1]); "
        "con.execute('CREATE TABLE t AS SELECT * FROM read_json(?)', [sys.argv[2]]); con.close()")


def run(episodes: int) -> dict[str, object]:
    path = corpus(episodes)
    size_mb = path.stat().st_size / 1e6
    runs = alternating({
        "bare": lambda: measure(python(BARE) + [str(fresh(WORK / "bare.duckdb")), str(path)]),
        "ours": lambda: measure(tracelab("ingest", str(path), "--store", str(fresh(WORK / "ingest.duckdb")),
                                         "--quiet")),
    }, ROUNDS)
    bare, ours = fastest(runs["bare"]), fastest(runs["ours"])
    return {
        "episodes": episodes,
        "file_mb": round(size_mb, 1),
        "bare_read_json": bare,
        "tracelab_ingest": ours,
        "all_runs_s": {side: [r.seconds for r in measured] for side, measured in runs.items()},
        "ratio": round(ours.seconds / bare.seconds, 2),
        "mb_per_s": round(size_mb / ours.seconds, 1),
        "episodes_per_s": round(episodes / ours.seconds),
    }

