"""Ingest: `tracelab ingest` vs DuckDB's bare `read_json` of the same file into one table."""
from __future__ import annotations

from common import WORK, corpus, fresh, measure, python, tracelab


def run(episodes: int) -> dict[str, object]:
    path = corpus(episodes)
    size_mb = path.stat().st_size / 1e6
    bare_db = fresh(WORK / "bare.duckdb")
    bare = measure(python(
        "import duckdb, sys; con = duckdb.connect(sys.argv[1]); "
        "con.execute('CREATE TABLE t AS SELECT * FROM read_json(?)', [sys.argv[2]]); con.close()"
    ) + [str(bare_db), str(path)])
    store = fresh(WORK / "ingest.duckdb")
    ours = measure(tracelab("ingest", str(path), "--store", str(store), "--quiet"))
    return {
        "episodes": episodes,
        "file_mb": round(size_mb, 1),
        "bare_read_json": bare,
        "tracelab_ingest": ours,
        "ratio": round(ours.seconds / bare.seconds, 2),
        "mb_per_s": round(size_mb / ours.seconds, 1),
        "episodes_per_s": round(episodes / ours.seconds),
    }
