"""`check --since RUN_ID` gives the verdicts of a full check on the same data."""
from __future__ import annotations

import json

import pytest

from tests.conftest import REPO
from tracelab.errors import UsageError
from tracelab.results.check import check
from tracelab.store import open_store

NATIVE = REPO / "sample_traces" / "native"
SUITE = REPO / "sample_traces" / "suite.yaml"


def rows(run) -> list[tuple]:
    return sorted(run.verdicts.select("case_id", "assertion_id", "episode_id", "passed", "exercised", "reason").rows())


def test_incremental_check_equals_full_check(tmp_path):
    changed = tmp_path / "changed.jsonl"
    first_line = (NATIVE / "shifts.jsonl").read_text().splitlines()[0]
    record = json.loads(first_line)
    record["output"] = (record.get("output") or "") + " Also: sk-live-REPLACED"
    changed.write_text(json.dumps(record) + "\n")

    with open_store(tmp_path / "s.duckdb") as store:
        store.ingest([NATIVE / "shifts.jsonl", NATIVE / "banking.jsonl"])
        first = check(store, SUITE)
        store.ingest([NATIVE / "support.jsonl", NATIVE / "edge_cases.jsonl"])
        store.ingest([changed], replace=True)

        incremental = check(store, SUITE, since=first.run_id)
        full = check(store, SUITE, save=False)

    assert rows(incremental) == rows(full)
    assert incremental.result.cases == full.result.cases
    assert incremental.result.summary == full.result.summary
    # the replaced run was re-evaluated: its new leak is found
    assert any(r[2] == record["episode_id"] and not r[3] for r in rows(incremental))
    assert rows(first) != rows(full)


def test_since_refuses_an_unknown_run_or_another_suite(tmp_path):
    other = tmp_path / "other.yaml"
    other.write_text(SUITE.read_text() + "\n# edited\n")
    with open_store(tmp_path / "s.duckdb") as store:
        store.ingest([NATIVE / "shifts.jsonl"])
        first = check(store, SUITE)
        with pytest.raises(UsageError, match="no saved check run with that id"):
            check(store, SUITE, since="nope")
        with pytest.raises(UsageError, match="another suite or another version"):
            check(store, other, since=first.run_id)
        partial = check(store, SUITE, cases=["assign-shift"])
        with pytest.raises(UsageError, match="did not check case 'roster-other-org'"):
            check(store, SUITE, since=partial.run_id)


def _saved_rows(store, run_id: str, table: str = "check_results") -> list[tuple]:
    return sorted(store.con.execute(
        f"SELECT case_id, assertion_id, episode_id, passed, exercised, reason, step_idx FROM {table} "
        "WHERE run_id = ?", [run_id]).fetchall(), key=repr)


def test_a_chain_of_incremental_checks_saves_a_full_checks_rows(tmp_path):
    # each --since run keeps the one before by reference (check_carried): two in a row, with a run
    # re-ingested under another case in between (its earlier rows must go, though no case of the
    # suite selects it now) and a --case run at the end, still give a full check's saved rows
    moved = tmp_path / "moved.jsonl"
    record = json.loads((NATIVE / "shifts.jsonl").read_text().splitlines()[0])
    case = record["case_id"]
    record["case_id"] = "no-such-case"
    moved.write_text(json.dumps(record) + "\n")
    with open_store(tmp_path / "s.duckdb") as store:
        store.ingest([NATIVE / "shifts.jsonl"])
        first = check(store, SUITE)
        store.ingest([NATIVE / "banking.jsonl"])
        second = check(store, SUITE, since=first.run_id)
        store.ingest([NATIVE / "support.jsonl", NATIVE / "edge_cases.jsonl"])
        store.ingest([moved], replace=True)
        third = check(store, SUITE, since=second.run_id)
        full = check(store, SUITE)
        assert _saved_rows(store, third.run_id) == _saved_rows(store, full.run_id)
        assert _saved_rows(store, third.run_id, "check_notable_results") == _saved_rows(
            store, full.run_id, "check_notable_results")
        assert not any(r[:3:2] == (case, record["episode_id"]) for r in _saved_rows(store, third.run_id))
        assert any(r[:3:2] == (case, record["episode_id"]) for r in _saved_rows(store, second.run_id))
        # what an earlier check saved stays as it was
        assert _saved_rows(store, second.run_id) == sorted(second.verdicts.select(
            "case_id", "assertion_id", "episode_id", "passed", "exercised", "reason", "step_idx").rows(), key=repr)
        # and a --since of a --since reads the chain back as the full rows
        fourth = check(store, SUITE, since=third.run_id, cases=["assign-shift"])
        only = check(store, SUITE, cases=["assign-shift"])
        assert _saved_rows(store, fourth.run_id) == _saved_rows(store, only.run_id)
        assert rows(fourth) == rows(only)
        assert fourth.result.summary == only.result.summary


def test_ctrl_c_while_the_earlier_rows_are_read_ahead_stops_the_check(tmp_path, monkeypatch):
    # the earlier check's rows are read in a thread (read_ahead) while the families run: an
    # interrupt there stops the read too, saves nothing and leaves the store usable
    import tracelab.engine.evaluate as evaluate
    from tracelab.errors import Interrupted

    with open_store(tmp_path / "s.duckdb") as store:
        store.ingest([NATIVE / "shifts.jsonl"])
        first = check(store, SUITE)
        store.ingest([NATIVE / "banking.jsonl"])

        def interrupted(con, plan):
            raise KeyboardInterrupt

        with monkeypatch.context() as patched:
            patched.setattr(evaluate, "_run_families", interrupted)
            with pytest.raises(Interrupted):
                check(store, SUITE, since=first.run_id)
        assert store.con.execute("SELECT count(*) FROM check_runs").fetchall()[0][0] == 1
        later = check(store, SUITE, since=first.run_id)
        full = check(store, SUITE, save=False)
    assert rows(later) == rows(full)


def _view_tables(store, run_id: str) -> dict[str, list[tuple]]:
    from tracelab.results.saved import VIEW_TABLES

    return {table: sorted(store.con.execute(f"SELECT * EXCLUDE (run_id) FROM {table} WHERE run_id = ?",
                                            [run_id]).fetchall(), key=repr) for table in VIEW_TABLES}


def _same_report(merged, read, full) -> None:
    """A `--since` result merged from summaries counts what a full check of the same runs does, and
    reports what the same `--since` reading the earlier rows back does (its rows come first: the
    first examples, and the order of failing assertions with as many failing runs, follow them)."""
    from dataclasses import replace

    from tracelab.results.report import never_exercised, render_text
    from tracelab.results.summaries import AggregatedResult

    assert isinstance(merged.result, AggregatedResult) and not isinstance(read.result, AggregatedResult)
    for result in (read.result, full.result):
        assert merged.result.summary == result.summary
        assert merged.result.cases == result.cases
        assert merged.result.runs_failed == result.runs_failed
        assert merged.result.never_exercised_count == never_exercised(result).height
    assert merged.result.failed_assertions() == read.result.failed_assertions()
    assert render_text(merged) == render_text(replace(read, saved=merged.saved))


BENCH_SUITE = REPO / "benchmarks" / "suite.yaml"


@pytest.mark.parametrize("strict", [False, True])
def test_since_continues_from_the_earlier_checks_summaries(tmp_path, monkeypatch, strict):
    # the text report needs none of the earlier check's rows (rows="none"): a --since that keeps
    # every run of it merges its saved summaries (check_summaries) with the new runs', reading none
    # of its rows back, and reports and saves what a full check does; twice in a row, the second
    # continuing from the first's summaries. Generated runs fail every kind of assertion.
    import tracelab.results.saved as saved
    from tracelab.generate import generate

    parts = [tmp_path / f"part-{i}.jsonl" for i in range(3)]
    for i, part in enumerate(parts):
        # each part's run ids sort before the earlier parts' (syn-32-..., then syn-31-...): the
        # earlier check's examples still come first, as its rows do
        generate(part, 60, seed=32 - i)
    with open_store(tmp_path / "s.duckdb") as store:
        store.ingest([parts[0]])
        previous = check(store, BENCH_SUITE, strict=strict).run_id
        for part in parts[1:]:
            store.ingest([part])
            read = check(store, BENCH_SUITE, since=previous, strict=strict, save=False)
            with monkeypatch.context() as patched:
                patched.setattr(saved, "saved_rows", None)  # reading the rows back would fail
                merged = check(store, BENCH_SUITE, since=previous, strict=strict, rows="none")
            full = check(store, BENCH_SUITE, strict=strict)
            _same_report(merged, read, full)
            assert merged.verdicts.height == 0  # it holds no row: none was asked for
            assert _saved_rows(store, merged.run_id) == _saved_rows(store, full.run_id)
            assert _view_tables(store, merged.run_id) == _view_tables(store, full.run_id)
            assert not _view_tables(store, merged.run_id)["check_reasons"] == []
            previous = merged.run_id


def test_since_reads_the_rows_back_where_the_summaries_cannot_continue(tmp_path):
    # a run the earlier check selected, ingested again (its results cannot be taken out of the
    # sums), a --case run (its runs are counted across every case), or --strict where the earlier
    # check had none: the earlier rows are read back, and the report is still a full check's
    from tracelab.results.summaries import AggregatedResult

    changed = tmp_path / "changed.jsonl"
    record = json.loads((NATIVE / "shifts.jsonl").read_text().splitlines()[0])
    record["output"] = (record.get("output") or "") + " Also: sk-live-REPLACED"
    changed.write_text(json.dumps(record) + "\n")
    with open_store(tmp_path / "s.duckdb") as store:
        store.ingest([NATIVE / "shifts.jsonl", NATIVE / "banking.jsonl"])
        first = check(store, SUITE).run_id
        store.ingest([NATIVE / "support.jsonl"])
        assert isinstance(check(store, SUITE, since=first, rows="none", save=False).result, AggregatedResult)
        for kwargs in ({"cases": ["assign-shift"]}, {"strict": True}):
            fallback = check(store, SUITE, since=first, rows="none", save=False, **kwargs)
            assert not isinstance(fallback.result, AggregatedResult)
            assert rows(fallback) == rows(check(store, SUITE, save=False, **kwargs))
        store.ingest([changed], replace=True)
        fallback = check(store, SUITE, since=first, rows="none")
        full = check(store, SUITE)
        assert not isinstance(fallback.result, AggregatedResult)
        assert rows(fallback) == rows(full)
        assert fallback.result.summary == full.result.summary
        assert _view_tables(store, fallback.run_id) == _view_tables(store, full.run_id)


def test_a_damaged_summary_is_passed_over_for_the_rows(tmp_path):
    # a frame of check_summaries that does not decode: the --since reads the earlier rows back
    # (they hold the same results) and reports what a full check does, without a traceback
    from tracelab.results.summaries import AggregatedResult

    with open_store(tmp_path / "s.duckdb") as store:
        store.ingest([NATIVE / "shifts.jsonl"])
        first = check(store, SUITE).run_id
        store.ingest([NATIVE / "banking.jsonl"])
        store.con.execute("UPDATE check_summaries SET frame = 'not arrow'::BLOB WHERE kind = 'examples'")
        read = check(store, SUITE, since=first, rows="none", save=False)
        full = check(store, SUITE, save=False)
    assert not isinstance(read.result, AggregatedResult)
    assert rows(read) == rows(full) and read.result.summary == full.result.summary


def test_the_cli_text_report_of_since_reads_no_earlier_row(tmp_path, monkeypatch):
    # `tracelab check --since` with the text report asks for no row (rows="none"): it continues
    # from the summaries; JSON lists the earlier rows, so it reads them back
    from click.testing import CliRunner

    import tracelab.results.saved as saved
    from tracelab.cli import cli

    store_path = str(tmp_path / "s.duckdb")
    with open_store(store_path) as store:
        store.ingest([NATIVE / "shifts.jsonl"])
        first = check(store, SUITE).run_id
        store.ingest([NATIVE / "banking.jsonl"])
    args = ["check", str(SUITE), "--store", store_path, "--since", first, "--no-save"]
    full = CliRunner().invoke(cli, ["check", str(SUITE), "--store", store_path, "--no-save"])
    with monkeypatch.context() as patched:
        patched.setattr(saved, "saved_rows", None)  # reading the rows back would fail
        text = CliRunner().invoke(cli, args)
        assert text.exit_code == full.exit_code == 1, text.output
        assert text.output.splitlines()[0] == full.output.splitlines()[0]
        # JSON does read them back: here the patched reader stops it
        assert isinstance(CliRunner().invoke(cli, [*args, "--format", "json"]).exception, TypeError)
    assert json.loads(CliRunner().invoke(cli, [*args, "--format", "json"]).output)["summary"] == json.loads(
        CliRunner().invoke(cli, ["check", str(SUITE), "--store", store_path, "--no-save", "--format", "json"]
                           ).output)["summary"]
