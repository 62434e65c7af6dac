"""benchmarks/handwritten.sql, the `check` benchmark's hand-written SQL baseline, against the
engine: identical verdicts on a generated corpus and on the edge episodes of test_pyeval."""
from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from benchmarks import handwritten
from tests.test_pyeval import EDGES, KEYS, SUITE
from tracelab.generate import generate
from tracelab.results.check import check
from tracelab.store import open_store


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store of 300 generated episodes (seed 5) and the hand-written edge episodes."""
    folder = tmp_path_factory.mktemp("handwritten")
    corpus = folder / "corpus.jsonl"
    generate(corpus, 300, seed=5)
    with corpus.open("a", encoding="utf-8") as fh:
        fh.writelines(json.dumps(e, ensure_ascii=False) + "\n" for e in EDGES)
    path = folder / "store.duckdb"
    with open_store(path) as store:
        assert [f.quarantined for f in store.ingest([corpus]).files] == [0]
    return path


@pytest.fixture(scope="module")
def hand(store_path: Path, tmp_path_factory: pytest.TempPathFactory) -> pl.DataFrame:
    out = tmp_path_factory.mktemp("handwritten-out") / "verdicts.parquet"
    rows = handwritten.run(store_path, out)
    verdicts = pl.read_parquet(out)
    assert rows == verdicts.height
    return verdicts


def test_handwritten_sql_and_the_engine_give_identical_verdicts(store_path: Path, hand: pl.DataFrame) -> None:
    with open_store(store_path, read_only=True) as store:
        engine = check(store, SUITE, save=False).verdicts.select(*KEYS, "passed", "exercised")
    joined = engine.join(hand, on=KEYS, how="full", coalesce=True, suffix="_hw")
    diff = joined.filter(~pl.col("passed").eq_missing(pl.col("passed_hw"))
                         | ~pl.col("exercised").eq_missing(pl.col("exercised_hw")))
    assert diff.sort(KEYS).to_dicts() == []
    assert hand.height == engine.height > 2000
    # every verdict kind occurs, so the comparison reaches each branch of the rules
    kinds = set(hand.select("passed", "exercised").unique().iter_rows())
    assert kinds == {(True, "yes"), (False, "yes"), (True, "no"), (True, "unknown")}


def test_the_edge_episodes_read_as_the_spec_says(hand: pl.DataFrame) -> None:
    edge = hand.filter(pl.col("episode_id") == "edge-retrieval")
    verdicts = {r["assertion_id"]: (r["passed"], r["exercised"]) for r in edge.to_dicts()}
    assert verdicts["retrieval_reports_omissions[0]"] == (False, "yes")  # 2.0 is not an integer
    assert verdicts["retrieval_excludes_superseded[1]"] == (False, "yes")  # kb-1 -> kb-2 -> kb-1
    assert verdicts["retrieval_within_budget[3]"] == (True, "yes")  # "7" is not 7
    assert verdicts["read-only"] == (True, "unknown")
