"""A store of the native sample traces with one saved check of the sample suite."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import REPO
from tracelab.results.check import check
from tracelab.store import open_store

SUITE = REPO / "sample_traces" / "suite.yaml"


@pytest.fixture(scope="module")
def sample_store(tmp_path_factory) -> tuple[Path, str]:
    """(store path, run id of its saved check)."""
    path = tmp_path_factory.mktemp("samples") / "samples.duckdb"
    with open_store(path) as store:
        store.ingest([REPO / "sample_traces" / "native"])
        run = check(store, SUITE)
    return path, run.run_id
