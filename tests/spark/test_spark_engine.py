"""`--engine spark` (docs/cli.md §1, Scale-out): the same tables, verdicts and exit codes as DuckDB.

One SparkSession (local[2], tests/spark/conftest.py) serves the whole test run. Every comparison
is against the DuckDB engine on the same files: a DuckDB store exported to Parquet (`Store.export`, the layout the
Spark engine writes) is read back table by table and compared row for row.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from tests.conftest import REPO, episode
from tracelab.cli import cli
from tracelab.generate import generate
from tracelab.store import PARTITIONED, TABLES, open_store
from tracelab.store.delta import is_delta_store, read_head, table_datasets

pyspark = pytest.importorskip("pyspark", reason="pyspark is not installed (pip install 'tracelab[spark]')")
if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip("Spark needs Java 17 (no java on PATH and no JAVA_HOME)", allow_module_level=True)

from tracelab.spark import engine  # noqa: E402

SAMPLES = REPO / "sample_traces"
SUITE = SAMPLES / "suite.yaml"
TINY_CHUNKS = 160 << 10
"""Bytes per ingest task in these tests: small, so that files spread over many tasks and waves."""


def _duckdb_export(tmp: Path, runs: list[tuple[list[Path], bool]]) -> Path:
    """Ingest each (paths, replace) in order into one DuckDB store; its export folder."""
    with open_store(tmp / "reference.duckdb") as store:
        for paths, replace in runs:
            store.ingest(paths, replace=replace)
        store.export(tmp / "reference")
    return tmp / "reference"


def _rows(folder: Path | str, table: str) -> list[tuple]:
    """A table's rows from a Parquet export or a Delta store (at its head's versions), sorted,
    without the ingest time (it differs by run)."""
    con = duckdb.connect()
    if is_delta_store(folder):
        con.register("_t", table_datasets(folder)[table])
        rel = con.sql("SELECT * FROM _t")
    else:
        hive = "true" if table in PARTITIONED else "false"
        rel = con.sql(f"SELECT * FROM read_parquet('{Path(folder) / table}/**/*.parquet', "
                      f"hive_partitioning = {hive})")
    if "ingested_at" in rel.columns:
        rel = rel.select(*[c for c in rel.columns if c != "ingested_at"])
    return sorted(tuple(json.dumps(v, sort_keys=True, default=str) for v in row) for row in rel.fetchall())


def _assert_same_tables(spark_store: Path | str, reference: Path) -> None:
    for table in TABLES:
        got, want = _rows(spark_store, table), _rows(reference, table)
        assert len(got) == len(want), f"{table}: {len(got)} rows on Spark, {len(want)} with DuckDB"
        assert got == want, f"{table}: rows differ"


def _corpus(tmp: Path) -> Path:
    """The sample traces plus a generated corpus spread over several files."""
    root = tmp / "corpus"
    shutil.copytree(SAMPLES, root / "samples", ignore=shutil.ignore_patterns("*.yaml", "*.md"))
    for part in range(2):
        generate(root / "generated" / f"part-{part}.jsonl", 20, seed=part)
    # a rollout of a newer Codex version: its unknown line types land in `sources.unread` on both engines
    _write(root / "drift" / "rollout-2026-11-30T10-00-00-019f.jsonl",
           {"timestamp": "2026-11-30T10:00:00Z", "type": "session_meta", "payload": {"id": "drift-1"}},
           {"timestamp": "2026-11-30T10:00:01Z", "type": "world_state", "payload": {"full": True}},
           {"timestamp": "2026-11-30T10:00:02Z", "type": "response_item",
            "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}})
    return root


def test_ingest_equals_duckdb_row_for_row_and_reruns_add_nothing(spark: object, tmp_path: Path) -> None:
    corpus = _corpus(tmp_path)
    store = tmp_path / "spark-store"
    first = engine.ingest(store, [corpus], chunk_bytes=TINY_CHUNKS)
    assert first.added > 100
    assert (store / "episodes" / "_delta_log").is_dir() and read_head(store).buckets == 16
    _assert_same_tables(store, _duckdb_export(tmp_path, [([corpus], False)]))

    # the same files named by file:// URLs, into the store named by one: the same paths, nothing new
    again = engine.ingest(store.as_uri(), [corpus.as_uri()], chunk_bytes=TINY_CHUNKS)
    assert again.added == 0 and again.count("already-ingested") == len(again.files) == len(first.files)
    generate(corpus / "generated" / "part-9.jsonl", 25, seed=9)
    more = engine.ingest(store, [corpus], chunk_bytes=TINY_CHUNKS)
    assert more.added == 25 and more.count("loaded") == 1
    shutil.rmtree(tmp_path / "reference")
    (tmp_path / "reference.duckdb").unlink()
    _assert_same_tables(store, _duckdb_export(tmp_path, [([corpus], False)]))


def _write(path: Path, *records: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _conflicting_files(root: Path) -> list[Path]:
    """Run `shared` in two files of different tasks with different content, plus a leak to catch."""
    pad = [episode(f"pad-{i}", {"kind": "assistant", "text": "x" * 2000}, case_id="other") for i in range(3)]
    return [
        _write(root / "a.jsonl", episode("shared", {"kind": "assistant", "text": "hello"}, case_id="c1",
                                         output="fine"), *pad),
        _write(root / "b.jsonl", episode("shared", {"kind": "assistant", "text": "the key is sk-live-1"},
                                         case_id="c1", output="sk-live-1"),
               episode("only-b", {"kind": "assistant", "text": "ok"}, case_id="c1", output="ok")),
        _write(root / "c.jsonl", episode("shared", {"kind": "assistant", "text": "hello"}, case_id="c1",
                                         output="fine")),
    ]


LEAK_SUITE = """
suite: spark-conflicts
min_cases: 1
cases:
  - id: c1
    select: {case_id: c1}
    expect: {must_not_leak: ["sk-live-"]}
"""


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout


def _same_check(spark_store: Path, duck_store: Path, suite: Path, *, cover: bool = False) -> tuple[int, dict]:
    """check (and cover) JSON and exit codes equal on both engines, up to ids, times and paths.

    Returns the exit code and the JSON of the Spark check, which saved its results in the store."""
    volatile = ("run_id", "elapsed_ms", "store")
    saved: dict = {}
    for command in (["check", "--all-results"], ["cover"])[:2 if cover else 1]:
        code_s, out_s = _cli(*command, str(suite), "--format", "json", "--engine", "spark",
                             "--store", str(spark_store))
        unsaved = ["--no-save"] if command[0] == "check" else []
        code_d, out_d = _cli(*command, str(suite), "--format", "json", "--store", str(duck_store), *unsaved)
        assert code_s == code_d, f"{command[0]}: exit {code_s} on Spark, {code_d} with DuckDB\n{out_s}"
        got, want = json.loads(out_s), json.loads(out_d)
        if command[0] == "check":
            code, saved = code_s, dict(got)
        for doc in (got, want):
            for key in volatile:
                doc.pop(key, None)
        assert got == want, f"{command[0]} differs"
    return code, saved


def test_conflict_across_tasks_and_replace_match_duckdb(spark: object, tmp_path: Path) -> None:
    a, b, c = _conflicting_files(tmp_path / "in")
    suite = tmp_path / "suite.yaml"
    suite.write_text(LEAK_SUITE)
    store = tmp_path / "spark-store"
    engine.ingest(store, [a.parent], chunk_bytes=1)  # one file per task
    reference = _duckdb_export(tmp_path, [([a.parent], False)])
    _assert_same_tables(store, reference)
    reasons = [r for r in _rows(store, "quarantine") if "already stored with different content" in r[2]]
    assert len(reasons) == 1  # b's `shared` conflicts with a's, though another task read it
    _same_check(store, tmp_path / "reference.duckdb", suite)

    # --replace: b read again replaces a's `shared`; its leak now fails the check on both engines
    replacing = tmp_path / "again" / "b2.jsonl"
    replacing.parent.mkdir()
    shutil.copy(b, replacing)
    with open(replacing, "a") as fh:
        fh.write(json.dumps(episode("extra", {"kind": "assistant", "text": "n"}, case_id="other")) + "\n")
    engine.ingest(store, [replacing], replace=True, chunk_bytes=1)
    with open_store(tmp_path / "reference.duckdb") as ref:
        ref.ingest([replacing], replace=True)
        shutil.rmtree(tmp_path / "reference")
        ref.export(tmp_path / "reference")
    _assert_same_tables(store, tmp_path / "reference")
    code, _ = _same_check(store, tmp_path / "reference.duckdb", suite)
    assert code == 1

    # --replace over files already recorded: they are read again, their earlier sources rows (and
    # the quarantine rows of those reads) make way for the new ones, as in one DuckDB store
    engine.ingest(store, [a.parent], replace=True, chunk_bytes=1)
    with open_store(tmp_path / "reference.duckdb") as ref:
        ref.ingest([a.parent], replace=True)
        shutil.rmtree(tmp_path / "reference")
        ref.export(tmp_path / "reference")
    _assert_same_tables(store, tmp_path / "reference")
    _same_check(store, tmp_path / "reference.duckdb", suite)


def test_sample_suite_on_more_buckets_same_verdicts_saved_and_queryable(spark: object, tmp_path: Path) -> None:
    store = tmp_path / "spark-store"
    code, _ = _cli("ingest", str(SAMPLES), "--engine", "spark", "--store", str(store), "--buckets", "40", "-q")
    assert code == 0
    assert read_head(store).buckets == 40
    assert len(list((store / "episodes").glob("ep_bucket=*"))) > 16
    with open_store(tmp_path / "duck.duckdb") as duck:
        duck.ingest([SAMPLES])
    code, document = _same_check(store, tmp_path / "duck.duckdb", SUITE, cover=True)
    assert code == 1  # the sample suite fails some cases on purpose, as with DuckDB
    run_id = document["run_id"]
    code, out = _cli("sql", "--store", str(store), "--format", "csv",
                     f"SELECT count(*) AS n FROM check_results WHERE run_id = '{run_id}'")
    assert code == 0, out
    assert int(out.splitlines()[1]) == document["summary"]["results"]
    code, _ = _cli("ingest", str(SAMPLES), "--engine", "spark", "--store", str(store), "--buckets", "16", "-q")
    assert code == 2  # a store keeps its bucket count

    # the saved check reads back without Spark: `show --check` and `view`, step_idx included
    failing = next(r for r in document["results"] if not r["passed"])
    code, shown = _cli("show", failing["episode_id"], "--store", str(store), "--check", run_id)
    assert code == 0, shown
    assert failing["assertion"] in "".join(shown.split())  # folded in the text column of a narrow terminal
    code, _ = _cli("view", "--store", str(store), "--run", run_id, "-o", str(tmp_path / "report.html"))
    assert code == 0 and failing["episode_id"] in (tmp_path / "report.html").read_text(encoding="utf-8")
    # Spark saves no rows for the report: `view` computes them as a DuckDB check saves them
    from tracelab.results.check import check
    from tracelab.view import build_report

    duck_run = check(tmp_path / "duck.duckdb", SUITE).run_id
    computed, read = build_report(store, run_id), build_report(tmp_path / "duck.duckdb", duck_run)
    assert (computed.cases, computed.summary) == (read.cases, read.summary)
    code, out = _cli("sql", "--store", str(store), "--format", "csv",
                     "SELECT count(*) FROM check_results WHERE step_idx IS NOT NULL")
    assert code == 0 and int(out.splitlines()[1]) > 0
    code, _ = _cli("export", str(tmp_path / "exported"), "--store", str(store))
    assert code == 0 and (tmp_path / "exported" / "episodes").is_dir()


def test_since_continues_a_saved_check_as_duckdb_does(spark: object, tmp_path: Path) -> None:
    """`check --since RUN_ID` on Spark: only the runs ingested after it are evaluated; same verdicts."""
    corpus = tmp_path / "in"
    generate(corpus / "first.jsonl", 30, seed=1)
    store = tmp_path / "spark-store"
    engine.ingest(store, [corpus])
    with open_store(tmp_path / "duck.duckdb") as duck:
        duck.ingest([corpus])
    runs = {}
    for name, args in (("spark", ["--engine", "spark", "--store", str(store)]),
                       ("duckdb", ["--store", str(tmp_path / "duck.duckdb")])):
        code, out = _cli("check", str(SUITE), "--format", "json", "--allow-ineffective", *args)
        runs[name] = json.loads(out)["run_id"]
    generate(corpus / "second.jsonl", 20, seed=2)
    engine.ingest(store, [corpus])
    with open_store(tmp_path / "duck.duckdb") as duck:
        duck.ingest([corpus])
    code_s, out_s = _cli("check", str(SUITE), "--format", "json", "--all-results", "--allow-ineffective",
                         "--since", runs["spark"], "--engine", "spark", "--store", str(store))
    code_d, out_d = _cli("check", str(SUITE), "--format", "json", "--all-results", "--allow-ineffective",
                         "--since", runs["duckdb"], "--store", str(tmp_path / "duck.duckdb"))
    assert code_s == code_d
    got, want = json.loads(out_s), json.loads(out_d)
    for doc in (got, want):
        for key in ("run_id", "elapsed_ms", "store"):
            doc.pop(key, None)
    assert got == want
    assert got["summary"]["runs"] > 0
    assert 0 < engine.TIMINGS["check_rows"] < got["summary"]["results"]  # the tasks saw only the new runs
    code, out = _cli("sql", "--store", str(store), "--format", "csv", "SELECT since_run FROM check_runs "
                     "WHERE since_run IS NOT NULL")
    assert out.splitlines()[1:] == [runs["spark"]]


EFFECTS_SUITE = """
suite: spark-effects
min_cases: 1
cases:
  - id: c
    select: {case_id: c}
    expect: {must_not_write: [send], must_not_leak: ["sk-live-"]}
"""


def test_registry_effects_give_the_same_verdicts(spark: object, tmp_path: Path) -> None:
    """Effects declared with `tracelab effects set` travel in the Parquet store's tool_effects/ and
    count on Spark as in the DuckDB store; a Spark ingest into that store keeps them."""
    send = [{"kind": "tool_call", "name": "send", "call_id": "k"},
            {"kind": "tool_result", "call_id": "k", "status": "ok"}]
    inputs = [_write(tmp_path / "in" / "a.jsonl", episode("r1", *send, case_id="c"),
                     episode("r2", {"kind": "assistant", "text": "no tools"}, case_id="c"))]
    suite = tmp_path / "suite.yaml"
    suite.write_text(EFFECTS_SUITE)
    duck = tmp_path / "duck.duckdb"
    with open_store(duck) as store:
        store.ingest(inputs)
    code, _ = _cli("check", str(suite), "--store", str(duck), "--no-save")
    assert code == 0  # nothing recorded says `send` writes
    code, _ = _cli("effects", "set", "send=write", "--store", str(duck))
    assert code == 0
    with open_store(duck, read_only=True) as store:
        store.export(tmp_path / "exported")
    code, document = _same_check(tmp_path / "exported", duck, suite)
    assert code == 1  # r1 wrote through `send`: only the registry says so
    failed = document["summary"]["failed"]
    # a Spark ingest into the exported store adopts it, effects included
    inputs.append(_write(tmp_path / "in2" / "b.jsonl", episode("r3", *send, case_id="c")))
    engine.ingest(tmp_path / "exported", [inputs[1]])
    with open_store(duck) as store:
        store.ingest([inputs[1]])
    code, document = _same_check(tmp_path / "exported", duck, suite)
    assert document["summary"]["failed"] > failed  # r3 as well


def _killed_at_random(script: str, seconds: float) -> None:
    """Run `script` in a new Python process (its own JVM) and kill -9 it, with its JVM, after a
    random moment of its first `seconds`."""
    import random

    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        proc.wait(timeout=random.uniform(0.5, seconds))
    except subprocess.TimeoutExpired:
        pass
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _store_rows(store: Path) -> dict[str, list[tuple]]:
    return {table: _rows(store, table) for table in table_datasets(store)}  # the view rows of checks too


@pytest.mark.slow  # a second JVM in a subprocess: `make soak`; the head test in test_spark_options runs in `make test`
def test_kill_9_of_ingest_and_check_leaves_the_previous_version_and_a_rerun_completes_it(
        spark: object, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    for part in range(8):
        generate(corpus / f"part-{part:02d}.jsonl", 5, seed=100 + part)
    store = tmp_path / "spark-store"
    engine.ingest(store, [corpus / "part-00.jsonl"])
    before = _store_rows(store)
    reference = _duckdb_export(tmp_path, [([corpus], False)])
    complete = {table: _rows(reference, table) for table in TABLES}
    _killed_at_random(f"from tracelab.spark import engine; engine.ingest({str(store)!r}, [{str(corpus)!r}], "
                      "master='local[2]', chunk_bytes=1)", 30)
    # whatever the moment: the previous version whole, or (killed after its commit) the new one whole
    assert _store_rows(store) in (before, complete)
    engine.ingest(store, [corpus], chunk_bytes=1)
    _assert_same_tables(store, reference)
    assert not list(store.glob("*/_staging"))  # what the killed ingest staged is gone
    saved = _store_rows(store)
    _killed_at_random(f"from tracelab.spark import engine; engine.check({str(store)!r}, {str(SUITE)!r}, "
                      "allow_ineffective=True, master='local[2]')", 30)
    after = _store_rows(store)
    assert after == saved or (  # or the check's whole commit: both tables, one run
        {t: after[t] for t in TABLES} == {t: saved[t] for t in TABLES}
        and len(after["check_runs"]) == len(saved.get("check_runs", [])) + 1)
    run = engine.check(store, SUITE, allow_ineffective=True)
    with open_store(store) as opened:
        assert opened.sql("SELECT count(*) FROM check_runs WHERE run_id = ?", [run.run_id]).item() == 1


def test_readme_spark_commands_run_as_written(spark: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                             ) -> None:
    """The `shell` block of README "More than one machine", in this test's Spark session (one JVM)."""
    import re
    import shlex

    block = re.findall(r"```shell\n(.*?)```", (REPO / "README.md").read_text(encoding="utf-8"), flags=re.S)
    commands = [line for line in block[0].splitlines() if line.startswith("tracelab ")]
    assert any("--engine spark" in c for c in commands)
    os.symlink(SAMPLES, tmp_path / "sample_traces")
    monkeypatch.chdir(tmp_path)
    for command in commands:
        result = CliRunner().invoke(cli, shlex.split(command)[1:])
        # exit 1 is a result (the sample suite fails cases on purpose), never an escaped exception
        assert isinstance(result.exception, (SystemExit, type(None))), f"{command}: {result.exception!r}"
        assert result.exit_code in (0, 1), f"{command}: exit {result.exit_code}\n{result.output}"
    # the relative store of the README: the tasks (other processes, other working folders) wrote into it
    with open_store(tmp_path / "spark-store") as store:
        assert store.sql("SELECT count(*) FROM check_results").item() > 0
    assert len(list((tmp_path / "spark-store" / "episodes").glob("ep_bucket=*/*.parquet"))) > 0
    assert (tmp_path / "spark-store" / "episodes" / "_delta_log").is_dir()
