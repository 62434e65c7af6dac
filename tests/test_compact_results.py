"""A saved check keeps its plain passes implied (issue 27): check_results is a view that lists every
result, check_exceptions holds the others, and a store written row by row is moved over intact."""
from __future__ import annotations

from datetime import datetime, timezone

import duckdb
import polars as pl

from tests.conftest import REPO
from tracelab.engine.verdicts import RESULT_SCHEMA
from tracelab.results.check import check
from tracelab.store import open_store

NATIVE = REPO / "sample_traces" / "native"
SUITE = REPO / "sample_traces" / "suite.yaml"
COLUMNS = ["case_id", "assertion_id", "assertion_type", "episode_id", "passed", "exercised", "reason", "step_idx"]


def _sorted(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.select(COLUMNS).cast(RESULT_SCHEMA).sort(COLUMNS[:4])


def _saved(con: duckdb.DuckDBPyConnection, run_id: str, table: str = "check_results") -> pl.DataFrame:
    return _sorted(pl.DataFrame(con.sql(f"SELECT * FROM {table} WHERE run_id = ?", params=[run_id])))


def _checked_store(path):
    with open_store(path) as store:
        store.ingest(sorted(NATIVE.glob("*.jsonl")))
        return check(store, SUITE)


def test_check_results_lists_every_result_and_stores_only_the_notable_ones(tmp_path):
    run = _checked_store(tmp_path / "s.duckdb")
    verdicts = _sorted(run.verdicts)
    plain = verdicts.filter(pl.col("passed") & (pl.col("exercised") == "yes") & pl.col("reason").is_null())
    assert plain.height > 0 and verdicts.height > plain.height  # both kinds occur in the samples
    with duckdb.connect(str(tmp_path / "s.duckdb"), read_only=True) as con:
        kinds = dict(con.execute("SELECT table_name, table_type FROM information_schema.tables "
                                 "WHERE table_name IN ('check_results', 'check_exceptions')").fetchall())
        assert kinds == {"check_results": "VIEW", "check_exceptions": "BASE TABLE"}
        assert _saved(con, run.run_id).equals(verdicts)
        exceptions = _saved(con, run.run_id, "check_exceptions")
        assert exceptions.equals(verdicts.join(plain, on=COLUMNS, how="anti", nulls_equal=True).sort(COLUMNS[:4]))
        assert con.execute("SELECT count(*) FROM check_selected WHERE run_id = ?",
                           [run.run_id]).fetchone()[0] == verdicts.select("case_id", "episode_id").n_unique()


def test_the_result_builds_every_row_only_when_asked(tmp_path):
    run = _checked_store(tmp_path / "s.duckdb")
    assert "verdicts" not in run.result.__dict__  # the report, the summary and the save did not need them
    assert run.result.summary.results == run.verdicts.height
    assert run.result.notable.height == run.verdicts.filter(
        ~(pl.col("passed") & (pl.col("exercised") == "yes") & pl.col("reason").is_null())).height


def _as_earlier_store(path, *, step_idx: bool) -> None:
    """Rewrite a store as an earlier tracelab left it: check_results a table of every row (without
    step_idx, for the oldest), no check_selected or check_exceptions."""
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE rows_kept AS SELECT * FROM check_results")
        con.execute("DROP VIEW check_results")
        con.execute("DROP TABLE check_selected")
        con.execute("DROP TABLE check_exceptions")
        con.execute("ALTER TABLE rows_kept RENAME TO check_results")
        if not step_idx:
            con.execute("ALTER TABLE check_results DROP COLUMN step_idx")


def test_a_store_with_check_results_as_a_table_is_moved_over_without_loss(tmp_path):
    for step_idx in (True, False):
        path = tmp_path / f"earlier-{step_idx}.duckdb"
        run = _checked_store(path)
        before = _sorted(run.verdicts)
        _as_earlier_store(path, step_idx=step_idx)
        with duckdb.connect(str(path), read_only=True) as con:  # what the earlier store holds
            assert con.execute("SELECT table_type FROM information_schema.tables "
                               "WHERE table_name = 'check_results'").fetchone()[0] == "BASE TABLE"
        with open_store(path) as store:
            after = _saved(store.con, run.run_id)
            kind = store.con.execute("SELECT table_type FROM information_schema.tables "
                                     "WHERE table_name = 'check_results'").fetchone()[0]
            # a later check continues the moved-over one
            again = check(store, SUITE, since=run.run_id)
        assert kind == "VIEW"
        expected = before if step_idx else before.with_columns(step_idx=pl.lit(None, RESULT_SCHEMA["step_idx"]))
        assert after.equals(expected)
        assert again.result.summary == run.result.summary


def test_an_earlier_store_read_as_it_is_still_gives_its_rows(tmp_path):
    # a store that cannot be upgraded (a read-only file of an earlier tracelab) keeps check_results a
    # table: what show, view and `check --since` read of it comes from that table
    from tracelab.results.saved import notable_results, read_result, saved_rows
    from tracelab.view.show import saved_failures

    path = tmp_path / "earlier.duckdb"
    run = _checked_store(path)
    _as_earlier_store(path, step_idx=True)
    with duckdb.connect(str(path), read_only=True) as con:
        assert notable_results(con) == "check_results"
        failing = run.verdicts.filter(~pl.col("passed"))
        episode = failing["episode_id"][0]
        assert saved_failures(con, run.run_id, [episode]).height == failing.filter(
            pl.col("episode_id") == episode).height
        # nothing ingested since now: every run of it is kept
        carried = saved_rows(con, run.run_id, [case.id for case in run.result.cases], datetime.now(timezone.utc))
        assert _sorted(carried.notable).equals(_sorted(run.result.notable))
        keys = ["case_id", "episode_id"]
        assert carried.selection.sort(keys).equals(run.result.selection.sort(keys))
        assert read_result(con, run.run_id).runs == run.result.summary.runs


def test_an_incremental_check_saves_the_rows_a_full_check_saves(tmp_path):
    # `--since` keeps the earlier check's rows by reference and adds the fresh ones: the saved
    # results equal a full check's, row for row, though only the fresh ones are written again
    with open_store(tmp_path / "s.duckdb") as store:
        store.ingest([NATIVE / "shifts.jsonl", NATIVE / "banking.jsonl"])
        first = check(store, SUITE)
        store.ingest([NATIVE / "support.jsonl", NATIVE / "edge_cases.jsonl"])
        incremental = check(store, SUITE, since=first.run_id)
        full = check(store, SUITE)
        assert incremental.result.carried[0] > 0 and incremental.result.carried[1] > 0
        saved = {run.run_id: _saved(store.con, run.run_id) for run in (incremental, full)}
        notable = {run.run_id: _saved(store.con, run.run_id, "check_notable_results") for run in (incremental, full)}
        written = {run.run_id: _saved(store.con, run.run_id, "check_exceptions") for run in (incremental, full)}
    assert saved[incremental.run_id].equals(saved[full.run_id])
    assert saved[full.run_id].equals(_sorted(full.verdicts))
    assert notable[incremental.run_id].equals(notable[full.run_id])
    assert written[full.run_id].equals(notable[full.run_id])
    assert written[incremental.run_id].height == notable[incremental.run_id].height - incremental.result.carried[0]
