"""What `tracelab check` saves for `tracelab view` (check_cases, check_failing_runs, check_assertions,
check_reasons, check_runs.runs), and the report of a check saved without them (an older store,
`check --engine spark`, more failing runs than it saved): the same file, computed from check_results
by the same code (`saved.view_rows`)."""
from __future__ import annotations

import shutil
import subprocess
import sys

import duckdb
import pytest

from tests.reliability.support import run_cli
from tracelab.results.saved import VIEW_TABLES


def report(store, out, *args: str) -> bytes:
    code, _, err = run_cli("view", "--store", str(store), "-o", str(out), *args)
    assert (code, err) == (0, ""), err
    return out.read_bytes()


@pytest.fixture(scope="module")
def saved(sample_store, tmp_path_factory):
    """A copy of the sample store and the report of its saved check, read from what check saved."""
    store, run_id = sample_store
    folder = tmp_path_factory.mktemp("saved")
    copy = folder / "store.duckdb"
    shutil.copyfile(store, copy)
    return copy, run_id, report(copy, folder / "saved.html", "--max-runs", "2")


def test_check_saves_what_the_report_shows(saved):
    store, run_id, _ = saved
    con = duckdb.connect(str(store), read_only=True)
    counts = {table: con.execute(f"SELECT count(*) FROM {table} WHERE run_id = ?", [run_id]).fetchall()[0][0]
              for table in VIEW_TABLES}
    assert counts["check_assertions"] == con.execute(
        "SELECT count(DISTINCT (case_id, assertion_id)) FROM check_results WHERE run_id = ?", [run_id]).fetchall()[0][0]
    assert counts["check_failing_runs"] == con.execute(
        "SELECT count(DISTINCT (case_id, episode_id)) FROM check_results WHERE run_id = ? AND NOT passed",
        [run_id]).fetchall()[0][0] > 0
    assert counts["check_cases"] > 0 and counts["check_reasons"] > 0
    failing = con.execute("SELECT count(DISTINCT episode_id) FROM check_results WHERE run_id = ? AND NOT passed",
                          [run_id]).fetchall()[0][0]
    assert con.execute("SELECT runs, runs_failed FROM check_runs WHERE run_id = ?", [run_id]).fetchall() == [
        (36, failing)]


@pytest.mark.parametrize("how", ["runs unknown", "store written before them", "rows lost"])
def test_a_check_saved_without_them_makes_the_same_report(saved, tmp_path, how):
    # a check saved before check_cases & co existed: in a store written before them (the report
    # upgrades it, and the check's `runs` is NULL), or in a store that has them
    store, _, expected = saved
    copy = tmp_path / store.name
    shutil.copyfile(store, copy)
    con = duckdb.connect(str(copy))
    if how == "runs unknown":
        con.execute("UPDATE check_runs SET runs = NULL")
    elif how == "rows lost":  # never written by tracelab: still, rows that are not there are not shown
        con.execute("DELETE FROM check_cases")
    else:  # every result in a check_results table, as the view's tables were not there yet
        con.execute("CREATE TABLE rows_kept AS SELECT * FROM check_results")
        con.execute("DROP VIEW check_results")
        for table in (*VIEW_TABLES, "check_selected", "check_exceptions"):
            con.execute(f"DROP TABLE {table}")
        con.execute("ALTER TABLE rows_kept RENAME TO check_results")
        con.execute("ALTER TABLE check_runs DROP COLUMN runs")
    con.close()
    got = report(copy, tmp_path / "fallback.html", "--max-runs", "2")
    assert got.replace(str(copy).encode(), str(store).encode()) == expected


def test_the_report_reads_what_check_saved(saved, tmp_path):
    # the saved rows are what the report shows: changed there, the report changes with them; one
    # that computes them from check_results reads none of the store's (its own shadow them a while)
    from tracelab.results.saved import FAILING_RUNS_SAVED

    store, run_id, expected = saved
    more = str(FAILING_RUNS_SAVED + 1)
    computed = report(store, tmp_path / "computed.html", "--max-runs", more)
    copy = tmp_path / store.name
    shutil.copyfile(store, copy)
    con = duckdb.connect(str(copy))
    con.execute("UPDATE check_assertions SET yes = yes + 1000 WHERE run_id = ?", [run_id])
    con.execute("UPDATE check_runs SET runs_failed = 0 WHERE run_id = ?", [run_id])
    con.close()
    got = report(copy, tmp_path / "edited.html", "--max-runs", "2")
    assert got != expected.replace(str(store).encode(), str(copy).encode())
    got = report(copy, tmp_path / "edited-computed.html", "--max-runs", more)
    assert got == computed.replace(str(store).encode(), str(copy).encode())


def test_rows_computed_from_check_results_are_those_check_saved(saved):
    # the report of a check saved without them computes them as check did (`view_rows`), from its
    # results read back in the order written
    from tracelab.results.saved import read_result, view_rows
    from tracelab.store import open_store

    store, run_id, _ = saved
    with open_store(store, read_only=True, create=False) as opened:
        result = read_result(opened.con, run_id)
        computed = view_rows(result)
        for table, frame in computed.items():
            columns = ", ".join(frame.columns)
            want = opened.con.execute(f"SELECT {columns} FROM {table} WHERE run_id = ? ORDER BY ALL",
                                      [run_id]).fetchall()
            assert frame.sort(frame.columns).rows() == want, table
        assert opened.con.execute("SELECT runs, runs_failed FROM check_runs WHERE run_id = ?", [run_id]).fetchall() == [
            (result.runs, result.runs_failed)]
    assert computed["check_assertions"].height > 0 and computed["check_reasons"].height > 0


def test_rows_computed_for_the_report_leave_the_store_as_it_was(saved, tmp_path):
    # the report's own rows are there while it reads them: after it, the store's tables read as before
    from tracelab.results.saved import FAILING_RUNS_SAVED
    from tracelab.store import open_store
    from tracelab.view import build_report

    store, run_id, _ = saved
    with open_store(store, read_only=True, create=False) as opened:
        def seen() -> list[tuple]:
            return opened.con.execute(
                "SELECT (SELECT list(view_name ORDER BY view_name) FROM duckdb_views() WHERE temporary), "
                "(SELECT count(*) FROM check_cases), (SELECT count(*) FROM check_runs)").fetchall()

        before = seen()
        report = build_report(opened, run_id, max_runs=FAILING_RUNS_SAVED + 1)
        assert seen() == before and before[0][1] > 0 and "check_cases" not in before[0][0]
    assert report.max_runs == FAILING_RUNS_SAVED + 1 and report.summary["runs"] == 36


def test_view_imports_neither_polars_nor_other_commands(sample_store, tmp_path):
    # a report is read from a saved check: no frame library, no suite compiler, no other command
    store, _ = sample_store
    code = ("import sys\nfrom tracelab.cli import main\n"
            "try:\n"
            f"    main(['view', '--store', {str(store)!r}, '-o', {str(tmp_path / 'r.html')!r}])\n"
            "except SystemExit as exc:\n"
            "    assert not exc.code, exc.code\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('polars', 'pyarrow', 'rich') "
            "or m.startswith(('tracelab.suite', 'tracelab.cli.'))))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip().splitlines()[-1] == "['tracelab.cli.options', 'tracelab.cli.view']"


def test_every_command_module_is_known_to_the_cli():
    import importlib
    import pkgutil

    import tracelab.cli as package
    from tracelab.cli import COMMAND_MODULES, all_commands

    found = {}
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"tracelab.cli.{info.name}")
        found |= {command.name: info.name for command in getattr(module, "COMMANDS", [])}
    assert found == COMMAND_MODULES
    assert set(all_commands()) == set(found)


def test_more_failing_runs_than_check_saved_come_from_check_results(sample_store, tmp_path, monkeypatch):
    # check saves a case's first FAILING_RUNS_SAVED failing runs: a report that holds more computes
    # them from check_results, the same runs as a check that saved them all
    import tracelab.results.saved
    from tests.view.conftest import SUITE
    from tracelab.results.check import check

    store, _ = sample_store
    copy = tmp_path / "store.duckdb"
    shutil.copyfile(store, copy)
    run_id = check(copy, SUITE).run_id
    expected = {n: report(copy, tmp_path / f"expected-{n}.html", "--max-runs", str(n)) for n in (1, 3)}
    monkeypatch.setattr(tracelab.results.saved, "FAILING_RUNS_SAVED", 1)
    fewer = check(copy, SUITE).run_id
    con = duckdb.connect(str(copy))
    most = con.execute("SELECT max(n) FROM (SELECT count(*) AS n FROM check_failing_runs WHERE run_id = ? "
                       "GROUP BY case_id, permission)", [fewer]).fetchall()[0][0]
    assert most == 1  # the first by id of those that crossed a permission boundary, and of the others
    con.close()
    # the earlier check's report, read from what it saved (1) and computed (3: more than the cap)
    for n, want in expected.items():
        assert report(copy, tmp_path / f"computed-{n}.html", "--max-runs", str(n), "--run", run_id) == want
    saved = {n: report(copy, tmp_path / f"saved-{n}.html", "--max-runs", str(n)) for n in (1, 3)}
    con = duckdb.connect(str(copy))
    con.execute("UPDATE check_runs SET runs = NULL WHERE run_id = ?", [fewer])
    con.close()
    for n, want in saved.items():
        assert report(copy, tmp_path / f"computed-{n}.html", "--max-runs", str(n)) == want
    assert saved[1] != saved[3] and expected[1] != expected[3]
