"""Ctrl-C and SIGTERM: one line and exit 130 from every command, and nothing half-saved
(issue 14, item 7).
"""
from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import textwrap
import time

import duckdb
import pytest

from tests.reliability.support import SAMPLES, SUITE, one_line_error, run_cli
from tracelab.store import open_store


def _interrupt(exc: BaseException):  # type: ignore[no-untyped-def]
    def raising(*args, **kwargs):
        raise exc
    return raising


INTERRUPTS = {
    # command: (arguments, what to interrupt, how)
    "ingest": (["ingest", str(SAMPLES / "native"), "-q"], "tracelab.ingest.pipeline.ingest_paths", KeyboardInterrupt()),
    "info": (["info"], "tracelab.results.summary.summarize", KeyboardInterrupt()),
    "sql": (["sql", "SELECT 1"], "tracelab.store.Store.sql", RuntimeError("Query interrupted")),
    # DuckDB's own exception for a query interrupt_queries stopped: an interrupt, not a damaged store
    "sql in DuckDB": (["sql", "SELECT 1"], "tracelab.store.Store.sql",
                      duckdb.InterruptException("INTERRUPT Error: Interrupted!")),
    "check": (["check", str(SUITE)], "tracelab.engine.evaluate._run_families", KeyboardInterrupt()),
    "check in a query": (["check", str(SUITE)], "tracelab.engine.evaluate._run_families",
                         RuntimeError("Query interrupted")),
    "cover": (["cover", str(SUITE)], "tracelab.engine.evaluate._run_families", KeyboardInterrupt()),
    "lint": (["lint", str(SUITE)], "tracelab.engine.evaluate._run_families", KeyboardInterrupt()),
    "export": (["export", "{tmp}/exported"], "tracelab.store.Store.export", KeyboardInterrupt()),
    "generate": (["generate", "{tmp}/g.jsonl", "-n", "5"], "tracelab.generate.generate", KeyboardInterrupt()),
}


@pytest.mark.parametrize("command", INTERRUPTS)
def test_every_command_interrupted_exits_130_with_one_line(tmp_path, sample_store, monkeypatch, command):
    store = tmp_path / "s.duckdb"
    shutil.copy(sample_store, store)
    args, target, exc = INTERRUPTS[command]
    monkeypatch.setattr(target, _interrupt(exc))
    where = [] if args[0] == "generate" else ["--store", str(store)]
    code, out, err = run_cli(*(a.format(tmp=tmp_path) for a in args), *where)
    assert (code, out) == (130, "") and one_line_error(err), err
    assert err.startswith("error: interrupted")
    monkeypatch.undo()
    with open_store(store, read_only=True) as opened:
        assert opened.sql("SELECT count(*) FROM check_runs").item() == 0


def test_a_check_interrupted_while_saving_saves_nothing(tmp_path, sample_store, monkeypatch):
    store = tmp_path / "s.duckdb"
    shutil.copy(sample_store, store)
    # after check_runs' row
    monkeypatch.setattr("tracelab.results.check._insert_frame", _interrupt(KeyboardInterrupt()))
    code, out, err = run_cli("check", str(SUITE), "--store", str(store), "-o", str(tmp_path / "r.txt"))
    assert (code, out, err) == (130, "", "error: interrupted: the check stopped before it finished; no result "
                                         "of it was saved\n")
    with open_store(store, read_only=True) as opened:
        assert opened.sql("SELECT count(*) FROM check_runs").item() == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.duckdb"]  # no report, not even a part of one


PAUSE = textwrap.dedent("""
    import sys, time
    import {module} as target
    real = target.{name}

    def pausing(*args, **kwargs):
        print("ready", flush=True)
        if {sleep}:
            time.sleep(120)
        return real(*args, **kwargs)

    target.{name} = pausing
    from tracelab.cli import main
    main(sys.argv[1:])
""")


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
@pytest.mark.parametrize("where", ["saving", "in a DuckDB query"])
def test_a_signal_ends_a_real_process_with_130_and_one_line(tmp_path, sample_store, signum, where):
    store = tmp_path / "s.duckdb"
    shutil.copy(sample_store, store)
    if where == "saving":  # Python code: inside check's transaction, after its first row
        script = PAUSE.format(module="tracelab.results.check", name="_insert_frame", sleep=True)
        args = ["check", str(SUITE), "--store", str(store)]
    else:  # a query of about a minute: DuckDB stops it when the signal's handler raises
        script = PAUSE.format(module="tracelab.store", name="Store.sql", sleep=False).replace(
            "import tracelab.store as target\n", "import tracelab.store\ntarget = tracelab.store.Store\n").replace(
            "target.Store.sql", "target.sql")
        args = ["sql", "SELECT count(*) FROM range(100000000000) t(x) WHERE x % 7 = 3", "--store", str(store)]
    proc = subprocess.Popen([sys.executable, "-c", script, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stdout.readline() == "ready\n"
        time.sleep(1)
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    name = signal.Signals(signum).name
    assert (proc.returncode, out) == (130, "") and one_line_error(err), err
    assert err.startswith("error: interrupted")
    if where == "in a DuckDB query":
        assert f"({name})" in err
    with open_store(store, read_only=True) as opened:
        assert opened.sql("SELECT count(*) FROM check_runs").item() == 0


