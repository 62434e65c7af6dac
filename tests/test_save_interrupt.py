"""Ctrl-C while a check saves its rows: the check says it was interrupted (exit 130 in the CLI) and
saves nothing, even when DuckDB has already aborted the save's transaction."""
from __future__ import annotations

import os
import signal
import threading
from typing import Any

import duckdb
import pytest

from tests.conftest import REPO
from tracelab.errors import Interrupted
from tracelab.results.check import check
from tracelab.store import open_store

NATIVE = REPO / "sample_traces" / "native"
SUITE = REPO / "sample_traces" / "suite.yaml"


class _InterruptedInsert:
    """The store's connection, but Ctrl-C comes while the save inserts the notable rows."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self._con = con

    def execute(self, query: str, *args: Any, **kwargs: Any) -> Any:
        if query.startswith("INSERT INTO check_exceptions"):
            # Ctrl-C while the insert runs: DuckDB stops it, the transaction is aborted, and the
            # KeyboardInterrupt comes out of execute()
            threading.Timer(0.2, os.kill, [os.getpid(), signal.SIGINT]).start()
            # a statement of seconds (bounded: a run where the signal is not delivered fails, never hangs)
            self._con.execute("INSERT INTO check_selected SELECT 'r', 'c', count(*)::VARCHAR FROM range(3000000000)")
            raise AssertionError("the insert was not interrupted")
        return self._con.execute(query, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._con, name)


def test_an_interrupted_save_is_reported_as_an_interrupt_and_saves_nothing(tmp_path):
    with open_store(tmp_path / "s.duckdb") as store:
        store.ingest(sorted(NATIVE.glob("*.jsonl")))
        raw = store.con
        # Ctrl-C raises KeyboardInterrupt here too (a pytest-xdist worker ignores SIGINT)
        previous = signal.signal(signal.SIGINT, signal.default_int_handler)
        store.con = _InterruptedInsert(raw)  # type: ignore[assignment]
        try:
            with pytest.raises(Interrupted, match="no result of it was saved"):
                check(store, SUITE)
        finally:
            store.con = raw
            signal.signal(signal.SIGINT, previous)
        assert store.con.execute("SELECT (SELECT count(*) FROM check_runs) + (SELECT count(*) FROM check_exceptions)"
                                 ).fetchall() == [(0,)]
