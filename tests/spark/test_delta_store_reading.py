"""Opening stores without deltalake: a Parquet export and a DuckDB file never need it; a Delta
store (written by `--engine spark`) is a one-line error naming the package."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tracelab.errors import StoreError
from tracelab.spark.layout import open_layout
from tracelab.store import open_store


def test_only_a_delta_store_needs_deltalake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("deltalake")
    open_layout(tmp_path / "delta", create=True)
    with open_store(tmp_path / "duck.duckdb") as store:
        store.export(tmp_path / "export")
    monkeypatch.setitem(sys.modules, "deltalake", None)  # as on an install without the spark extra
    with open_store(tmp_path / "export") as store:
        assert store.sql("SELECT count(*) FROM episodes").item() == 0
    with pytest.raises(StoreError, match=r"reading it needs deltalake: pip install 'tracelab\[spark\]'"):
        open_store(tmp_path / "delta")
