"""An ingest leaves its row groups merged: the next write's checkpoint has nothing left to merge."""
from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

import tracelab.ingest.pipeline as pipeline
from tracelab.errors import StoreError
from tracelab.sqlfiles import load_sql
from tracelab.store import open_store

ROW_GROUP = 122_880  # DuckDB's rows per row group


def _row_groups(con: duckdb.DuckDBPyConnection) -> int:
    return con.execute(load_sql("ingest/row_groups")).fetchall()[0][0]


def _fragmented(path: Path) -> duckdb.DuckDBPyConnection:
    """The run tables, `steps` appended in five transactions of a row group and a part each, as
    an ingest's batches leave it."""
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE tracelab_meta (key VARCHAR PRIMARY KEY, value VARCHAR)")
    for table in ("episodes", "steps", "tool_calls", "tool_definitions"):
        con.execute(f"CREATE TABLE {table} (episode_id VARCHAR, idx INTEGER)")
    for _ in range(5):
        con.execute("INSERT INTO steps SELECT 'run-' || i, i FROM range(?) r(i)", [ROW_GROUP + 7_000])
    con.execute("CHECKPOINT")
    return con


def test_compact_merges_what_the_next_checkpoint_would(tmp_path: Path) -> None:
    con = _fragmented(tmp_path / "store.duckdb")
    before = _row_groups(con)
    pipeline.compact(con)
    after = _row_groups(con)
    assert after < before
    # a later write's checkpoint (a check saving its results) finds nothing more to merge
    con.execute("COMMENT ON TABLE steps IS 'written'")
    con.execute("CHECKPOINT")
    assert _row_groups(con) == after
    assert con.execute("SELECT count(*) FROM steps").fetchall()[0][0] == 5 * (ROW_GROUP + 7_000)


def test_without_compact_the_next_checkpoint_merges(tmp_path: Path) -> None:
    """What `compact` spares the next write: the premise of the test above."""
    con = _fragmented(tmp_path / "store.duckdb")
    before = _row_groups(con)
    con.execute("COMMENT ON TABLE steps IS 'written'")
    con.execute("CHECKPOINT")
    assert _row_groups(con) < before


def test_an_ingest_that_adds_runs_compacts(tmp_path: Path, monkeypatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(pipeline, "compact", lambda con: calls.append(_row_groups(con)))
    monkeypatch.setattr(pipeline, "COMPACT_MIN_RUNS", 1)
    trace = Path(__file__).parents[2] / "sample_traces" / "native" / "banking.jsonl"
    with open_store(tmp_path / "store.duckdb") as store:
        store.ingest([trace])
        assert len(calls) == 1
        store.ingest([trace])  # already stored: nothing added, nothing to merge
        assert len(calls) == 1


def test_a_small_ingest_leaves_the_merging_to_the_next_checkpoint(tmp_path: Path, monkeypatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(pipeline, "compact", lambda con: calls.append(_row_groups(con)))
    trace = Path(__file__).parents[2] / "sample_traces" / "native" / "banking.jsonl"
    with open_store(tmp_path / "store.duckdb") as store:
        store.ingest([trace])
    assert calls == []


def test_a_checkpoint_the_disk_refuses_is_one_line_and_loses_nothing(tmp_path: Path, monkeypatch) -> None:
    def full_disk(con: duckdb.DuckDBPyConnection) -> None:
        raise duckdb.IOException("could not write file: No space left on device")

    monkeypatch.setattr(pipeline, "compact", full_disk)
    monkeypatch.setattr(pipeline, "COMPACT_MIN_RUNS", 1)
    trace = Path(__file__).parents[2] / "sample_traces" / "native" / "banking.jsonl"
    with open_store(tmp_path / "store.duckdb") as store:
        with pytest.raises(StoreError, match="every file is stored, but the store could not be checkpointed"):
            store.ingest([trace])
        stored = store.con.execute("SELECT count(*) FROM episodes").fetchall()[0][0]
    assert stored == len(trace.read_text().splitlines())
