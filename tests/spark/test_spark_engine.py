"""`--engine spark` (cli-and-results.md, Scale-out): the same tables, verdicts and exit codes as DuckDB.

One SparkSession (local[2]) serves the whole module. Every comparison is against the DuckDB
engine on the same files: a DuckDB store exported to Parquet (`Store.export`, the layout the
Spark engine writes) is read back table by table and compared row for row.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from tests.conftest import REPO, episode
from tracelab.cli import cli
from tracelab.generate import generate
from tracelab.store import PARTITIONED, TABLES, open_store

pyspark = pytest.importorskip("pyspark", reason="pyspark is not installed (pip install 'tracelab[spark]')")
if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip("Spark needs Java 17 (no java on PATH and no JAVA_HOME)", allow_module_level=True)

from tracelab.spark import engine  # noqa: E402
from tracelab.spark.layout import commit, open_layout, recover  # noqa: E402

SAMPLES = REPO / "sample_traces"
SUITE = SAMPLES / "suite.yaml"
TINY_CHUNKS = 64 << 10
"""Bytes per ingest task in these tests: small, so that files spread over many tasks and waves."""


@pytest.fixture(scope="module")
def spark() -> Iterator[object]:
    session = engine.session("local[2]")
    yield session


def _duckdb_export(tmp: Path, runs: list[tuple[list[Path], bool]]) -> Path:
    """Ingest each (paths, replace) in order into one DuckDB store; its export folder."""
    with open_store(tmp / "reference.duckdb") as store:
        for paths, replace in runs:
            store.ingest(paths, replace=replace)
        store.export(tmp / "reference")
    return tmp / "reference"


def _rows(folder: Path, table: str) -> list[tuple]:
    """A table's rows from a Parquet store, sorted, without the ingest time (it differs by run)."""
    hive = "true" if table in PARTITIONED else "false"
    con = duckdb.connect()
    rel = con.sql(f"SELECT * FROM read_parquet('{folder / table}/**/*.parquet', hive_partitioning = {hive})")
    if "ingested_at" in rel.columns:
        rel = rel.select(*[c for c in rel.columns if c != "ingested_at"])
    return sorted(tuple(json.dumps(v, sort_keys=True, default=str) for v in row) for row in rel.fetchall())


def _assert_same_tables(spark_store: Path, reference: Path) -> None:
    for table in TABLES:
        got, want = _rows(spark_store, table), _rows(reference, table)
        assert len(got) == len(want), f"{table}: {len(got)} rows on Spark, {len(want)} with DuckDB"
        assert got == want, f"{table}: rows differ"


def _corpus(tmp: Path) -> Path:
    """The sample traces plus a generated corpus spread over several files."""
    root = tmp / "corpus"
    shutil.copytree(SAMPLES, root / "samples", ignore=shutil.ignore_patterns("*.yaml", "*.md"))
    for part in range(2):
        generate(root / "generated" / f"part-{part}.jsonl", 40, seed=part)
    return root


def test_ingest_equals_duckdb_row_for_row_and_reruns_add_nothing(spark: object, tmp_path: Path) -> None:
    corpus = _corpus(tmp_path)
    store = tmp_path / "spark-store"
    first = engine.ingest(store, [corpus], chunk_bytes=TINY_CHUNKS)
    assert first.added > 140
    assert (store / "episodes").is_dir() and json.loads((store / "_tracelab.json").read_text())["ep_buckets"] == 16
    _assert_same_tables(store, _duckdb_export(tmp_path, [([corpus], False)]))

    again = engine.ingest(store, [corpus], chunk_bytes=TINY_CHUNKS)
    assert again.added == 0 and again.count("already-ingested") == len(again.files)
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


def _same_check(tmp: Path, spark_store: Path, duck_store: Path, suite: Path) -> None:
    """check and cover JSON, and exit codes, equal on both engines (up to ids, times and paths)."""
    volatile = ("run_id", "elapsed_ms", "store")
    for command in (["check", "--all-results"], ["cover"]):
        code_s, out_s = _cli(*command, str(suite), "--format", "json", "--engine", "spark",
                             "--store", str(spark_store))
        code_d, out_d = _cli(*command, str(suite), "--format", "json", "--store", str(duck_store), "--no-save"
                             ) if command[0] == "check" else \
            _cli(*command, str(suite), "--format", "json", "--store", str(duck_store))
        assert code_s == code_d, f"{command[0]}: exit {code_s} on Spark, {code_d} with DuckDB"
        got, want = json.loads(out_s), json.loads(out_d)
        for doc in (got, want):
            for key in volatile:
                doc.pop(key, None)
        assert got == want, f"{command[0]} differs"


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
    _same_check(tmp_path, store, tmp_path / "reference.duckdb", suite)

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
    _same_check(tmp_path, store, tmp_path / "reference.duckdb", suite)
    code, _ = _cli("check", str(suite), "--engine", "spark", "--store", str(store))
    assert code == 1


def test_sample_suite_on_more_buckets_same_verdicts_saved_and_queryable(spark: object, tmp_path: Path) -> None:
    store = tmp_path / "spark-store"
    code, _ = _cli("ingest", str(SAMPLES), "--engine", "spark", "--store", str(store), "--buckets", "40", "-q")
    assert code == 0
    assert json.loads((store / "_tracelab.json").read_text())["ep_buckets"] == 40
    assert len(list((store / "episodes").glob("ep_bucket=*"))) > 16
    with open_store(tmp_path / "duck.duckdb") as duck:
        duck.ingest([SAMPLES])
    _same_check(tmp_path, store, tmp_path / "duck.duckdb", SUITE)
    code, text = _cli("check", str(SUITE), "--engine", "spark", "--store", str(store), "--format", "json")
    assert code == 1  # the sample suite fails some cases on purpose, as with DuckDB
    run_id = json.loads(text)["run_id"]
    code, out = _cli("sql", "--store", str(store), "--format", "csv",
                     f"SELECT count(*) AS n FROM check_results WHERE run_id = '{run_id}'")
    assert code == 0, out
    assert int(out.splitlines()[1]) == json.loads(text)["summary"]["results"]
    code, _ = _cli("ingest", str(SAMPLES), "--engine", "spark", "--store", str(store), "--buckets", "16", "-q")
    assert code == 2  # a store keeps its bucket count


def test_an_interrupted_commit_is_completed_by_the_next_ingest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    """The journal: a kill after the first rename of a commit; recover applies the rest."""
    layout = open_layout(tmp_path / "store", create=True)
    staging = layout.staging()
    parts = []
    for name in ("episodes/ep_bucket=3/c000001_0.parquet", "sources/c000001.parquet"):
        path = staging / name
        path.parent.mkdir(parents=True)
        path.write_bytes(b"part")
        parts.append((path, layout.root / name))
    real = os.replace
    calls = []

    def dying(src: object, dst: object) -> None:
        calls.append(src)
        if len(calls) == 3:  # the journal's own rename, the first part, then the kill
            raise KeyboardInterrupt
        real(src, dst)

    monkeypatch.setattr(os, "replace", dying)
    with pytest.raises(KeyboardInterrupt):
        commit(layout, staging.with_name(staging.name + "-x"), parts, [])
    monkeypatch.setattr(os, "replace", real)
    assert (layout.root / parts[0][1].relative_to(layout.root)).exists()
    assert not parts[1][1].exists()
    assert recover(layout) == 1
    assert all(dst.exists() for _, dst in parts)
    assert not any((layout.root / "_txn").iterdir())


@pytest.mark.slow  # a second JVM in a subprocess: `make soak`; the journal test above runs in `make test`
def test_killed_spark_ingest_leaves_no_partial_file_and_a_rerun_completes_it(spark: object, tmp_path: Path
                                                                              ) -> None:
    corpus = tmp_path / "corpus"
    for part in range(8):
        generate(corpus / f"part-{part:02d}.jsonl", 5, seed=100 + part)
    store = tmp_path / "spark-store"
    script = (f"from tracelab.spark import engine; engine.WAVE_TASKS = 1; "
              f"engine.ingest({str(store)!r}, [{str(corpus)!r}], master='local[2]', chunk_bytes=1)")
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and proc.poll() is None:
            if len(list((store / "sources").glob("*-c*.parquet"))) >= 2:
                break
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    con = duckdb.connect()
    sources = con.sql(f"SELECT source_uri, episodes FROM read_parquet('{store}/sources/*.parquet')").fetchall()
    assert 0 < len(sources) < 8, "the kill should land mid-ingest"
    stored = dict(con.sql(f"SELECT source_uri, count(*) FROM read_parquet('{store}/episodes/*/*.parquet') "
                          "GROUP BY ALL").fetchall())
    # every committed file is whole (all its episodes, with its sources row); no other file has rows
    assert stored == {uri: n for uri, n in sources}
    engine.ingest(store, [corpus], chunk_bytes=1)
    assert not any((store / "_txn").iterdir()) if (store / "_txn").exists() else True
    _assert_same_tables(store, _duckdb_export(tmp_path, [([corpus], False)]))


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
        assert result.exit_code in (0, 1), f"{command}: exit {result.exit_code}\n{result.output}"
    assert (tmp_path / "spark-store" / "check_results").is_dir()
