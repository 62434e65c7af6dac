"""Check: `tracelab check` of benchmarks/suite.yaml vs a per-episode Python evaluator (pyeval.py).

Both give one verdict per (case, assertion, episode); the two verdict sets must
be identical before any figure is reported (a mismatch exits non-zero with a
sample of the differing rows). The store is ingested once, untimed.
"""
from __future__ import annotations

import subprocess
import sys

import orjson
import polars as pl
from common import ROOT, WORK, corpus, measure, tracelab

from tracelab.suite import load_suite

SUITE = ROOT / "suite.yaml"
PYEVAL = ROOT / "pyeval.py"
TARGET = 20.0
"""tracelab check should be at least this many times faster than pyeval."""
KEYS = ["case_id", "assertion_id", "episode_id"]


def run(episodes: int) -> dict[str, object]:
    path = corpus(episodes)
    store = WORK / f"check-{path.stem}.duckdb"
    # ingesting a file whose content hash the store already records adds nothing: a cached store
    subprocess.run(tracelab("ingest", str(path), "--store", str(store), "--quiet"), check=True,
                   stdout=subprocess.DEVNULL)
    tl_out = WORK / "check-tracelab.json"
    py_out = WORK / "check-pyeval.parquet"
    # exit 1 only says that some case failed: the suite is made to fail on the corpus's flaws
    ours = measure(tracelab("check", str(SUITE), "--store", str(store), "--no-save", "--format", "json",
                            "--all-results", "--output", str(tl_out)), ok_exit=(0, 1))
    baseline = measure([sys.executable, str(PYEVAL), str(SUITE), str(path), "--out", str(py_out)])
    verdicts = tracelab_verdicts(tl_out.read_bytes())
    compare(verdicts, pl.read_parquet(py_out))
    return {
        "episodes": episodes,
        "suite": SUITE.name,
        "cases": len(load_suite(SUITE).cases),
        "case_assertions": verdicts.select("case_id", "assertion_id").n_unique(),
        "verdicts": verdicts.height,
        "failed": int((~verdicts["passed"]).sum()),
        "verdicts_identical": True,
        "tracelab_check": ours,
        "pyeval": baseline,
        "ratio": round(baseline.seconds / ours.seconds, 2),
        "target": TARGET,
    }


def tracelab_verdicts(document: bytes) -> pl.DataFrame:
    """The result rows of a `check --format json --all-results` document."""
    rows = orjson.loads(document)["results"]
    return pl.DataFrame(
        {"case_id": [r["case"] for r in rows], "assertion_id": [r["assertion"] for r in rows],
         "episode_id": [r["episode_id"] for r in rows], "passed": [r["passed"] for r in rows],
         "exercised": [r["exercised"] for r in rows]},
        schema={"case_id": pl.Utf8, "assertion_id": pl.Utf8, "episode_id": pl.Utf8,
                "passed": pl.Boolean, "exercised": pl.Utf8},
    )


def differences(ours: pl.DataFrame, theirs: pl.DataFrame) -> pl.DataFrame:
    """Rows whose (passed, exercised) differ, or that only one side has (its columns then null)."""
    joined = ours.join(theirs, on=KEYS, how="full", coalesce=True, suffix="_pyeval")
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
