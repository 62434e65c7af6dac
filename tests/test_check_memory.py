"""A check raises DuckDB's memory limit while it runs (results.check.CHECK_MEMORY_LIMIT), unless
TRACELAB_MEMORY_LIMIT says otherwise, and gives the connection its own limit back."""
from __future__ import annotations

from tracelab.results.check import check_memory
from tracelab.store import open_store


def _limit(con) -> str:
    return con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]


def test_the_check_limit_holds_inside_and_the_store_limit_after(tmp_path, monkeypatch):
    monkeypatch.delenv("TRACELAB_MEMORY_LIMIT", raising=False)
    with open_store(tmp_path / "s.duckdb") as store:
        before = _limit(store.con)
        with check_memory(store.con):
            inside = _limit(store.con)
        assert inside != before and inside.startswith("1.8 GiB")  # 2GB as DuckDB shows it
        assert _limit(store.con)[:3] == before[:3]  # DuckDB rounds the restored value to 0.1 MiB


def test_an_explicit_memory_limit_is_left_alone(tmp_path, monkeypatch):
    monkeypatch.setenv("TRACELAB_MEMORY_LIMIT", "512MB")
    with open_store(tmp_path / "s.duckdb") as store:
        before = _limit(store.con)
        with check_memory(store.con):
            assert _limit(store.con) == before
