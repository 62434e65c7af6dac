"""Pass rates come with their 95% Wilson score interval (the notebook draws it on every bar)."""
from __future__ import annotations

import polars as pl
import pytest

from tracelab.results.cover import wilson_interval


@pytest.mark.parametrize(("passed", "runs", "low", "high"), [
    (0, 10, 0.0, 0.2775),      # never 0-width at the edges, unlike p ± z·sqrt(p(1-p)/n)
    (5, 10, 0.2366, 0.7634),
    (10, 10, 0.7225, 1.0),
    (99, 100, 0.9455, 0.9982),
    (49_000, 50_000, 0.9787, 0.9812),  # at 50k runs: a band of a quarter of a point
])
def test_wilson_interval_matches_the_textbook_values(passed, runs, low, high):
    frame = pl.DataFrame({"p": [passed], "n": [runs]}).select(**wilson_interval(pl.col("p"), pl.col("n")))
    assert frame["low"].item() == pytest.approx(low, abs=1e-4)
    assert frame["high"].item() == pytest.approx(high, abs=1e-4)
