"""Fixtures of the reliability tests."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.reliability.support import SAMPLES
from tracelab.store import open_store


@pytest.fixture(scope="module")
def sample_store(tmp_path_factory) -> Path:
    store = tmp_path_factory.mktemp("sample") / "s.duckdb"
    with open_store(store) as opened:
        opened.ingest([SAMPLES])
    return store
