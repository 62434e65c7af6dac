"""Reliability, round two (issue 14): no leak in a reason, bounded suite loading, the error
contract everywhere (one line, the right exit code: 3 for a damaged store, 130 for Ctrl-C and
SIGTERM), and output that a stored id cannot forge.

Each numbered item of the issue has a test here, named in the README "Guarantees".
"""
from __future__ import annotations

import json
import os
import pty
import resource
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import duckdb
import pytest

from tests.conftest import REPO, episode
from tests.reliability.support import run_cli, tracelab
from tracelab.store import open_store

SAMPLES = REPO / "sample_traces"
SUITE = SAMPLES / "suite.yaml"
KEY = "sk-live-Qx81PAYMENTS"


def one_line_error(err: str) -> bool:
    """A single ``error: ...`` line: no traceback, no click ``Aborted!``."""
    return err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err and "Aborted" not in err


def suite_file(folder: Path, assertions: str, name: str = "suite.yaml", select: str = "") -> Path:
    """A one-case suite (case `c`) with these assertions (YAML list items)."""
    path = folder / name
    path.write_text("suite: s\nmin_cases: 1\ncases:\n  - id: c\n    expect: {must_not_leak: [never-there]}\n"
                    + (f"    select: {select}\n" if select else "")
                    + "    assertions:\n" + textwrap.indent(textwrap.dedent(assertions).strip("\n"), "      ")
                    + "\n", encoding="utf-8")
    return path


def ingested(folder: Path, *runs: dict, name: str = "s.duckdb") -> Path:
    traces = folder / f"{name}.jsonl"
    traces.write_text("".join(json.dumps(r) + "\n" for r in runs), encoding="utf-8")
    store = folder / name
    with open_store(store) as opened:
        opened.ingest([traces])
    return store


# --- 1, 2: leaks in reasons --------------------------------------------------------------------

def test_args_valid_reasons_name_the_path_and_rule_never_the_value(tmp_path):
    store = ingested(tmp_path, episode(
        "r1", {"kind": "tool_call", "name": "send", "call_id": "1", "args": {"body": f"Authorization: Bearer {KEY}"}},
        {"kind": "tool_result", "call_id": "1"}, case_id="c"))
    suite = suite_file(tmp_path, """
        - {type: args_valid, id: short-body, tool: send, schema: {type: object, properties: {body: {maxLength: 5}}}}
        - {type: args_valid, id: no-extra, tool: send, schema: {type: object, additionalProperties: false}}
    """)
    outputs = {}
    for fmt in ("text", "json", "junit"):
        code, out, err = run_cli("check", str(suite), "--store", str(store), "--format", fmt, "--all-results")
        assert (code, err) == (1, "")
        outputs[fmt] = out
    outputs["saved"] = run_cli("sql", "SELECT reason FROM check_results", "--store", str(store), "--format", "csv")[1]
    assert "call_index 0: args invalid at /body: fails maxLength 5 (the value is a string of 42 characters)" \
        in outputs["text"]
    assert "args invalid: fails additionalProperties (the value is a string of 42 characters)" in outputs["saved"]
    leaked = [name for name, text in outputs.items() for part in (KEY, "Bearer", "body'") if part in text]
    assert leaked == []


def test_a_where_failing_on_stored_data_never_quotes_it(tmp_path):
    store = ingested(tmp_path, episode("r1", {"kind": "user", "text": "hi"}, case_id="c",
                                       agent=f"PAYMENTS_KEY={KEY}"))
    suite = suite_file(tmp_path, "- {type: output_contains, value: ok}",
                       select='{where: "CAST(agent AS INTEGER) > 1"}')
    for command in ("check", "cover"):
        code, out, err = run_cli(command, str(suite), "--store", str(store))
        assert (code, out) == (2, "") and one_line_error(err), err
        assert err.startswith(f"error: {suite}:4: case 'c': key 'select.where' fails on the stored runs with a "
                              "DuckDB Conversion Error")
        assert KEY not in err and "PAYMENTS" not in err


# --- 3: a `where` runs without external access -------------------------------------------------

@pytest.mark.parametrize("call", ["current_setting('home_directory') = ''", "sleep_ms(100000) IS NULL",
                                  "write_log('x') IS NULL", "nextval('s') > 0", "setseed(0.5) IS NULL"])
def test_where_functions_that_reach_outside_the_run_are_refused(tmp_path, call):
    suite = suite_file(tmp_path, "- {type: output_contains, value: ok}", select=json.dumps({"where": call}))
    code, out, err = run_cli("lint", str(suite))
    assert (code, out) == (2, "") and one_line_error(err), err
    assert "is not allowed in a where" in err


def test_where_runs_in_a_sandbox_without_external_access(store, write_jsonl):
    """The selection runs on a connection of its own: external access off, configuration locked,
    whatever the store's connection allows (a function the load-time list missed reads nothing)."""
    from tracelab.suite.where import where_flags

    store.ingest([write_jsonl([episode("r1", {"kind": "user", "text": "hi"})])])
    store.con.execute("CREATE TEMP TABLE chk_matched AS SELECT 'c' AS case_id, 1 AS where_idx, 'r1' AS episode_id")
    probes = [("c", "current_setting('enable_external_access') = false"),
              ("c", "current_setting('lock_configuration') = true"),
              ("c", "current_setting('TimeZone') = 'UTC'")]
    flags = where_flags(store.con, probes, lambda case: case)
    assert flags.rows() == [("r1", [True, True, True])]
    assert store.con.execute("SELECT current_setting('enable_external_access')").fetchone() == (True,)


# --- 4, 5: bounded memory and time ---------------------------------------------------------------

def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))


def test_a_yaml_alias_bomb_is_refused_quickly(tmp_path):
    levels = "\n".join(f"            {chr(98 + i)}: &{chr(98 + i)} {{anyOf: [{', '.join([f'*{chr(97 + i)}'] * 9)}]}}"
                       for i in range(8))
    suite = suite_file(tmp_path, f"""
        - type: args_valid
          tool: t
          schema:
            type: object
            properties:
              a: &a {{enum: [1, 2, 3, 4, 5, 6, 7, 8, 9]}}
{textwrap.indent(levels, "  ")}
    """)
    assert len(suite.read_bytes()) < 1500
    start = time.monotonic()
    done = tracelab("lint", str(suite), cwd=tmp_path, timeout=120, preexec_fn=_limit_memory)
    assert (done.returncode, done.stdout) == (2, "") and one_line_error(done.stderr), done.stderr
    assert "aliases expand to more than 1,000,000 values" in done.stderr
    assert time.monotonic() - start < 30


def test_sequence_rules_are_near_linear_in_the_calls_of_a_run(tmp_path):
    def run(calls: int) -> dict:
        names = ["lookup" if i % 2 == 0 else "assign" for i in range(calls)]
        names[-1] = "lookup"  # so the lookup before it is never answered: `after` fails near the end
        return episode(f"long-{calls}", *({"kind": "tool_call", "name": n} for n in names), case_id="c")

    suite = suite_file(tmp_path, """
        - type: sequence_valid
          rules:
            - {type: after, trigger: lookup, then: assign, within: 1}
            - {type: never_after, trigger: assign, forbidden: delete}
            - {type: sequence, tools: [lookup, assign, lookup]}
        - {type: trace_tool_sequence, sequence: [lookup, assign], allow_other_tools: true}
    """)
    seconds = {}
    for calls in (20_000, 100_000):
        store = ingested(tmp_path, run(calls), name=f"s{calls}.duckdb")
        runs = []
        for _ in range(2):  # the faster of two: the first may pay for imports and a cold cache
            start = time.perf_counter()
            code, out, _ = run_cli("check", str(suite), "--store", str(store), "--no-save", "--allow-ineffective")
            runs.append(time.perf_counter() - start)
            assert code == 1 and f'"lookup" at call_index {calls - 2} is not followed by "assign"' in out
        seconds[calls] = min(runs)
    # 5x the calls: near-linear is at most 5x the time (about 2.5x, with the fixed costs); the
    # NOT EXISTS over every later call (before) took 11x: 2.7 s, then 30 s at 100,000 calls
    assert seconds[100_000] < 6 * seconds[20_000], seconds


# --- 6: a damaged store ---------------------------------------------------------------------------

def damage(store: Path, tables: tuple[str, ...], out: Path) -> Path:
    """A copy of `store` with bytes overwritten near the start of every data block of `tables`
    (where the data of a small store lies); the file's headers stay intact, so it still opens."""
    with duckdb.connect(str(store), read_only=True) as con:
        block_size = con.execute("SELECT block_size FROM pragma_database_size()").fetchone()[0]
        blocks = sorted({b for t in tables for (b,) in con.execute(
            f"SELECT DISTINCT block_id FROM pragma_storage_info('{t}') WHERE block_id >= 0").fetchall()})
    assert blocks
    shutil.copy(store, out)
    with out.open("r+b") as f:
        for block in blocks:
            f.seek(3 * 4096 + block * block_size + 100)
            f.write(b"\xde\xad\xbe\xef" * 64)
    return out


@pytest.fixture(scope="module")
def sample_store(tmp_path_factory) -> Path:
    store = tmp_path_factory.mktemp("sample") / "s.duckdb"
    with open_store(store) as opened:
        opened.ingest([SAMPLES])
    return store


TABLES = ("episodes", "steps", "tool_calls", "tool_definitions", "quarantine", "sources")
COMMANDS = {
    "info": ["info"],
    "info json": ["info", "--format", "json"],
    "sql": ["sql", "SELECT * FROM steps"],
    "check": ["check", str(SUITE)],
    "check --no-save": ["check", str(SUITE), "--no-save"],
    "cover": ["cover", str(SUITE)],
    "lint": ["lint", str(SUITE)],
    "export": ["export", "{tmp}/exported"],
    "ingest": ["ingest", str(SAMPLES / "native"), "-q"],
}


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_on_a_damaged_store_exits_3_with_one_line(tmp_path, sample_store, command):
    store = damage(sample_store, TABLES, tmp_path / "damaged.duckdb")
    before = store.read_bytes()
    args = [a.format(tmp=tmp_path) for a in COMMANDS[command]]
    code, out, err = run_cli(*args, "--store", str(store))
    assert (code, out) == (3, "") and one_line_error(err), err
    assert err.startswith(f"error: {store}: the store is damaged or unreadable (Corrupt database file"), err
    assert "restore it from a backup, or ingest the traces into a new store" in err
    assert store.read_bytes() == before  # nothing written into it


def test_ingest_refuses_a_damaged_store_before_writing(tmp_path, sample_store):
    """Damage where an ingest never reads (the steps): it is still refused, and the file untouched."""
    store = damage(sample_store, ("steps",), tmp_path / "damaged.duckdb")
    before = store.read_bytes()
    new = tmp_path / "new.jsonl"
    new.write_text(json.dumps(episode("brand-new", {"kind": "user", "text": "hi"})) + "\n")
    code, out, err = run_cli("ingest", str(new), "--store", str(store), "-q")
    assert (code, out) == (3, "") and one_line_error(err), err
    assert err.startswith(f"error: {store}: the store is damaged or unreadable")
    assert store.read_bytes() == before and not Path(f"{store}.wal").exists()


# --- 7: Ctrl-C and SIGTERM --------------------------------------------------------------------------

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
    monkeypatch.setattr("tracelab.bulk_insert.insert_arrow", _interrupt(KeyboardInterrupt()))  # after check_runs' row
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
        script = PAUSE.format(module="tracelab.bulk_insert", name="insert_arrow", sleep=True)
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


# --- 8: tracebacks that were ------------------------------------------------------------------------

def test_an_unwritable_output_is_a_one_line_error_before_any_work(tmp_path, sample_store):
    missing = tmp_path / "no-such-folder" / "report.xml"
    for args in (["check", str(SUITE), "--format", "junit", "-o", str(missing)],
                 ["sql", "SELECT 1", "-o", str(missing)], ["cover", str(SUITE), "-o", str(missing)],
                 ["lint", str(SUITE), "-o", str(missing)]):
        code, out, err = run_cli(*args, "--store", str(sample_store))
        assert (code, out) == (2, "") and one_line_error(err), (args, err)
    with open_store(sample_store, read_only=True) as opened:
        assert opened.sql("SELECT count(*) FROM check_runs").item() == 0  # refused before checking


def test_a_bad_memory_limit_is_a_one_line_error(sample_store, monkeypatch):
    monkeypatch.setenv("TRACELAB_MEMORY_LIMIT", "abc")
    code, out, err = run_cli("info", "--store", str(sample_store))
    assert (code, out) == (2, "") and one_line_error(err), err
    assert "TRACELAB_MEMORY_LIMIT='abc' is not a memory size" in err


@pytest.mark.parametrize(("assertion", "expected"), [
    ("{type: trace_max_steps, max: 99999999999999999999999}", "must be at most 9,223,372,036,854,775,807"),
    ("{type: trace_must_call_tool, tool: t, max_calls: 18446744073709551616}", "must be at most"),
    ("{type: sequence_valid, rules: [{type: after, trigger: a, then: b, within: 99999999999999999999}]}",
     "must be at most"),
    ("{type: retrieval_top, ids: [a], k: 99999999999999999999}", "must be at most"),
    ('{type: output_contains, value: "\\uD800"}', "lone surrogate"),
    ('{type: args_valid, tool: t, schema: {$file: "a\\0b"}}', "the path holds a NUL character"),
    ('{type: args_valid, tool: t, schema: {$file: "loop1"}}', "cannot be resolved (a symlink loop?)"),
])
def test_hostile_suite_values_are_one_line_suite_errors(tmp_path, sample_store, assertion, expected):
    (tmp_path / "loop1").symlink_to(tmp_path / "loop2")
    (tmp_path / "loop2").symlink_to(tmp_path / "loop1")
    suite = suite_file(tmp_path, f"- {assertion}")
    code, out, err = run_cli("check", str(suite), "--store", str(sample_store), "--no-save")
    assert (code, out) == (2, "") and one_line_error(err), err
    assert expected in err


@pytest.mark.parametrize("query", [
    "SELECT 'a\\x00b'::BLOB AS b, 'x' AS s", "SELECT 1::VARIANT AS v",
    "SELECT * FROM (VALUES ('infinity'::TIMESTAMP), ('2024-05-01 10:00'::TIMESTAMP)) v(t)",
    "SELECT '-infinity'::DATE AS d", "SELECT 'infinity'::TIMESTAMPTZ AS t"])
@pytest.mark.parametrize("fmt", ["json", "csv", "table"])
def test_sql_writes_every_column_type_in_every_format(sample_store, query, fmt):
    code, out, err = run_cli("sql", query, "--store", str(sample_store), "--format", fmt)
    assert (code, err) == (0, ""), err
    if fmt == "json":
        rows = json.loads(out)
        assert rows and all(value is not None for row in rows for value in row.values())
    if "infinity" in query:
        assert "infinity" in out


def test_sql_cannot_configure_a_file_log_and_abort(tmp_path, sample_store):
    done = tracelab("sql", f"CALL enable_logging(storage='file', storage_path='{tmp_path}/logs')",
                    "--store", str(sample_store))
    assert (done.returncode, done.stdout) == (2, "") and one_line_error(done.stderr), done.stderr
    assert "the configuration has been locked" in done.stderr
    assert not (tmp_path / "logs").exists()


# --- 10: a foreign DuckDB file ----------------------------------------------------------------------

def test_a_foreign_duckdb_file_is_refused_and_left_untouched(tmp_path):
    other = tmp_path / "other.duckdb"
    with duckdb.connect(str(other)) as con:
        con.execute("CREATE TABLE invoices (id INTEGER)")
        con.execute("CREATE VIEW paid AS SELECT * FROM invoices")
    code, out, err = run_cli("ingest", str(SAMPLES / "native"), "--store", str(other), "-q")
    assert (code, out) == (3, "") and one_line_error(err), err
    assert "is a DuckDB database that is not a tracelab store (it holds invoices, paid)" in err
    with duckdb.connect(str(other), read_only=True) as con:
        assert con.execute("SELECT table_name FROM duckdb_tables() UNION ALL "
                           "SELECT view_name FROM duckdb_views() WHERE NOT internal ORDER BY 1").fetchall() == [
            ("invoices",), ("paid",)]


def test_a_failed_setup_leaves_no_table_behind(tmp_path, monkeypatch):
    import tracelab.store

    def failing(con, name):  # type: ignore[no-untyped-def]
        raise duckdb.IOException("disk full (simulated)")

    monkeypatch.setattr(tracelab.store, "run_script", failing)  # the views, after the tables
    store = tmp_path / "new.duckdb"
    code, _, err = run_cli("ingest", str(SAMPLES / "native"), "--store", str(store), "-q")
    assert code == 3 and "cannot be initialised: disk full (simulated)" in err
    with duckdb.connect(str(store), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM duckdb_tables()").fetchone() == (0,)


# --- 11, 12: output a stored id cannot break or forge -----------------------------------------------

FORGER = "x\n  ok    forged-case (999 runs)"
CONTROL = "ctl\x01\x1b[31m\u202e"


@pytest.fixture
def forging_store(tmp_path) -> tuple[Path, Path]:
    runs = [episode(FORGER, {"kind": "user", "text": "hi"}, case_id=CONTROL, output=f"{KEY}"),
            episode("plain", {"kind": "user", "text": "hi"}, case_id=CONTROL, output="ok")]
    store = ingested(tmp_path, *runs)
    suite = tmp_path / "suite.yaml"
    suite.write_text(f"suite: \"s\\u0001\"\nmin_cases: 1\ncases:\n  - id: {json.dumps(CONTROL)}\n"
                     f"    expect: {{must_not_leak: [{KEY}]}}\n"
                     "    assertions:\n      - {type: trace_must_not_call_tool, tool: never}\n")
    return store, suite


def test_junit_is_well_formed_whatever_the_ids_hold(forging_store):
    store, suite = forging_store
    for extra in ([], ["--all-results"]):
        code, out, err = run_cli("check", str(suite), "--store", str(store), "--format", "junit", *extra)
        assert (code, err) == (1, "")
        root = ET.fromstring(out)  # raises on a character XML 1.0 forbids
        case = root.find("testsuite/testcase")
        assert case.get("name") == "ctl\\x01\\x1b[31m\\u202e"
        assert "x\\n  ok    forged-case (999 runs)" in case.find("failure").text


def test_an_episode_id_cannot_forge_a_line_of_a_text_report(forging_store):
    store, suite = forging_store
    outputs = {
        "check": run_cli("check", str(suite), "--store", str(store), "--all-results")[1],
        "cover": run_cli("cover", str(suite), "--store", str(store))[1],
        "lint": run_cli("lint", str(suite), "--store", str(store))[1],
        "info": run_cli("info", "--store", str(store))[1],
    }
    for name, text in outputs.items():
        assert text, name
        lines = text.splitlines()
        assert not any(line.lstrip().startswith(("ok    forged-case", "ok forged-case")) for line in lines), name
        assert not any(char in text for char in "\x01\x1b\u202e"), name
    assert "x\\n  ok    forged-case (999 runs)  must_not_leak[0]" in outputs["check"]
    assert "ctl\\x01\\x1b[31m\\u202e" in outputs["check"]


# --- 13, 14: usability -----------------------------------------------------------------------------

def test_sql_reads_a_query_from_a_file_stdin_or_a_leading_comment(tmp_path, sample_store, monkeypatch):
    commented = "-- how many runs?\nSELECT count(*) AS n FROM episodes"
    query_file = tmp_path / "q.sql"
    query_file.write_text(commented)
    expected = run_cli("sql", "SELECT count(*) AS n FROM episodes", "--store", str(sample_store), "--format", "csv")
    assert expected[0] == 0
    for args in ([commented], ["--format", "csv", commented], ["-f", str(query_file)], ["--file", str(query_file)]):
        fmt = [] if "--format" in args else ["--format", "csv"]
        assert run_cli("sql", *args, *fmt, "--store", str(sample_store)) == expected, args
    done = tracelab("sql", "-", "--format", "csv", "--store", str(sample_store), input=commented)
    assert (done.returncode, done.stdout) == (0, expected[1])
    for args, message in ((["-f", str(tmp_path / "none.sql")], "cannot read the query"),
                          ([], "no query"), (["SELECT 1", "-f", str(query_file)], "not both")):
        code, out, err = run_cli("sql", *args, "--store", str(sample_store))
        assert (code, out) == (2, "") and one_line_error(err) and message in err, err


def _on_a_terminal(*args: str, env: dict[str, str]) -> bytes:
    """The output of ``tracelab ARGS`` run with a pseudo-terminal as stdout and stderr."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "tracelab", *args], stdout=follower, stderr=follower,
                            env={**os.environ, **env})
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    proc.wait(timeout=60)
    os.close(leader)
    return b"".join(chunks)


def test_no_color_is_honoured_on_a_terminal(sample_store):
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    for args in (["check", str(SUITE), "--no-save"], ["sql", "SELECT 1 AS one"], ["info", "--store", "/nowhere"]):
        store = [] if "--store" in args else ["--store", str(sample_store)]
        colored = _on_a_terminal(*args, *store, env={**env, "TERM": "xterm"})
        plain = _on_a_terminal(*args, *store, env={**env, "TERM": "xterm", "NO_COLOR": "1"})
        assert b"\x1b[" in colored, args
        assert b"\x1b[" not in plain and plain, args


def test_info_as_json_and_cover_and_lint_to_a_file(tmp_path, sample_store):
    code, out, err = run_cli("info", "--format", "json", "--store", str(sample_store))
    assert (code, err) == (0, "")
    info = json.loads(out)
    assert info["tables"]["episodes"] > 0 and {"format", "files"} <= set(info["formats"][0])
    for command in ("cover", "lint"):
        report = tmp_path / f"{command}.json"
        shown = run_cli(command, str(SUITE), "--store", str(sample_store), "--format", "json")
        written = run_cli(command, str(SUITE), "--store", str(sample_store), "--format", "json", "-o", str(report))
        assert written[0] == shown[0] and written[1] == ""
        assert json.loads(report.read_text())["suite_path"] == json.loads(shown[1])["suite_path"]
