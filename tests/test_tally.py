"""Tallies of disjoint sets of runs add up to the tally of them all (what `check --since` relies on)."""
from __future__ import annotations

import polars as pl
import pytest

from tests.conftest import REPO
from tracelab.engine.verdicts import summarize, tally
from tracelab.results.check import check
from tracelab.store import open_store

NATIVE = REPO / "sample_traces" / "native"
SUITE = REPO / "sample_traces" / "suite.yaml"


@pytest.mark.parametrize("strict", [False, True])
def test_tallies_of_disjoint_runs_add_up(tmp_path, strict):
    with open_store(tmp_path / "s.duckdb") as store:
        store.ingest(sorted(NATIVE.glob("*.jsonl")))
        run = check(store, SUITE, save=False, strict=strict)
    result = run.result
    runs = result.selection["episode_id"].unique().sort()
    first = runs.head(runs.len() // 2).implode()

    def part(frame: pl.DataFrame, inside: bool) -> pl.DataFrame:
        kept = pl.col("episode_id").is_in(first)
        return frame.filter(kept if inside else ~kept)

    counted = (tally(part(result.notable, True), part(result.selection, True), strict)
               + tally(part(result.notable, False), part(result.selection, False), strict))
    whole = tally(result.notable, result.selection, strict)
    assert counted.runs == whole.runs and counted.failing_runs == whole.failing_runs
    assert counted.selected == whole.selected and counted.per_case == whole.per_case
    assert counted.families == whole.families
    assert (counted.failed, counted.not_exercised, counted.unknown) == (whole.failed, whole.not_exercised,
                                                                        whole.unknown)
    parted = summarize(result.suite, tuple(run.suite.cases), result.notable, result.selection, result.units,
                       strict, counted=counted)
    assert parted.cases == result.cases and parted.summary == result.summary
    keys = ["case_id", "episode_id"]
    assert parted.per_run.sort(keys).equals(result.per_run.sort(keys))
    assert any(not case.passed for case in result.cases) and result.summary.failed > 0
