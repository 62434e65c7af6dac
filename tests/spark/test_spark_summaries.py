"""`check --engine spark` reports from its tasks' summaries, and writes files of a target size (issue 28).

The driver merges per-task summaries (tracelab.results.summaries) and reads only the verdict rows
the chosen output lists: the text report, JSON, JUnit and the rows `view` reads must still be the
DuckDB engine's, byte for byte up to ids and times. The ingest writes each bucket's rows into
files of `--target-file-size`, not one per chunk.
"""
from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import REPO
from tracelab.cli import cli
from tracelab.generate import generate
from tracelab.store import PARTITIONED, open_store
from tracelab.store.delta import read_head

pytest.importorskip("pyspark", reason="pyspark is not installed (pip install 'tracelab[spark]')")
if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip("Spark needs Java 17 (no java on PATH and no JAVA_HOME)", allow_module_level=True)

from deltalake import DeltaTable  # noqa: E402

from tracelab.spark import engine  # noqa: E402

SAMPLES = REPO / "sample_traces"
SUITE = SAMPLES / "suite.yaml"
VIEW_TABLES = ("check_cases", "check_failing_runs", "check_assertions", "check_reasons")


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    assert isinstance(result.exception, (SystemExit, type(None))), repr(result.exception)
    return result.exit_code, result.stdout


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The sample traces and a generated corpus (with failures of every kind) in a Spark store of 8
    buckets, ingested one file per task, and in a DuckDB store."""
    root = tmp_path_factory.mktemp("summaries")
    corpus = root / "corpus"
    shutil.copytree(SAMPLES, corpus / "samples", ignore=shutil.ignore_patterns("*.yaml", "*.md"))
    for part in range(3):
        generate(corpus / "generated" / f"part-{part}.jsonl", 40, seed=10 + part)
    engine.session("local[2]")
    engine.ingest(root / "spark", [corpus], buckets=8, chunk_bytes=1)
    with open_store(root / "duck.duckdb") as duck:
        duck.ingest([corpus])
    return root / "spark", root / "duck.duckdb"


def _normal(text: str) -> str:
    """A report without what differs by run: ids, times, the store's path."""
    text = re.sub(r'"(run_id|elapsed_ms|store)": [^,\n]*', r'"\1": _', text)
    text = re.sub(r'(name="(run_id|store)" value=)"[^"]*"', r'\1"_"', text)
    return re.sub(r'time="[0-9.]+"', 'time="_"', text)


@pytest.mark.parametrize("options", [("--format", "text"), ("--format", "json"), ("--format", "junit"),
                                     ("--format", "text", "--strict"), ("--format", "json", "--strict")])
def test_reports_from_summaries_equal_duckdbs(spark: object, stores: tuple[Path, Path],
                                              options: tuple[str, ...]) -> None:
    spark_store, duck_store = stores
    code_s, out_s = _cli("check", str(SUITE), *options, "--no-save", "--engine", "spark", "--store", str(spark_store))
    code_d, out_d = _cli("check", str(SUITE), *options, "--no-save", "--store", str(duck_store))
    assert code_s == code_d == 1
    assert _normal(out_s) == _normal(out_d)
    # the text report comes from the summaries alone; JSON and JUnit read the rows they list
    listed = engine.TIMINGS["check_listed"]
    if options[1] == "text":
        assert listed == 0
    else:
        reported = json.loads(_cli("check", str(SUITE), "--format", "json", "--no-save", *options[2:],
                                   "--store", str(duck_store))[1])["results"]
        assert listed == len(reported) < engine.TIMINGS["check_results"]


def test_saved_view_rows_equal_duckdbs(spark: object, stores: tuple[Path, Path], tmp_path: Path) -> None:
    """The rows `view` reads, aggregated by the tasks, are the DuckDB check's row for row, and `view` reads them."""
    spark_store, duck_store = stores
    duck_copy = tmp_path / "duck.duckdb"
    shutil.copy(duck_store, duck_copy)
    ids = {}
    for name, args in (("spark", ["--engine", "spark", "--store", str(spark_store)]),
                       ("duck", ["--store", str(duck_copy)])):
        code, out = _cli("check", str(SUITE), "--format", "json", *args)
        assert code == 1
        ids[name] = json.loads(out)["run_id"]
    from tracelab.results.saved import has_view_rows

    got, want = {}, {}
    for name, path, rows in (("spark", spark_store, got), ("duck", duck_copy, want)):
        with open_store(path, read_only=True) as store:
            assert has_view_rows(store.con, ids[name])
            for table in (*VIEW_TABLES, "check_runs"):
                columns = "runs, runs_failed, failed_cases" if table == "check_runs" else "* EXCLUDE (run_id)"
                rows[table] = sorted(map(repr, store.con.execute(
                    f"SELECT {columns} FROM {table} WHERE run_id = ?", [ids[name]]).fetchall()))
    assert got == want
    assert len(got["check_failing_runs"]) > 0 and len(got["check_reasons"]) > 0
    code, _ = _cli("view", "--store", str(spark_store), "--run", ids["spark"], "-o", str(tmp_path / "r.html"))
    assert code == 0


def _files(store: Path, table: str) -> list[dict]:
    head = read_head(store)
    actions = DeltaTable(f"{head.url}/{table}", version=head.versions[table]).get_add_actions(flatten=True)
    import pyarrow as pa

    return pa.table(actions).select(["path", "size_bytes"]).to_pylist()


def test_files_have_the_target_size_whatever_the_chunks(spark: object, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    for part in range(6):
        generate(corpus / f"part-{part}.jsonl", 30, seed=40 + part)
    big, small = tmp_path / "big", tmp_path / "small"
    code, _ = _cli("ingest", str(corpus), "--engine", "spark", "--store", str(big), "--buckets", "4", "-q")
    assert code == 0
    # six chunks, one file per bucket: the chunks' rows were rewritten together
    engine.ingest(big, [corpus / "part-0.jsonl"], chunk_bytes=1)  # nothing new: nothing written
    for table in PARTITIONED:
        paths = [f["path"] for f in _files(big, table)]
        assert len(paths) == len({p.split("/")[0] for p in paths}) <= 4, table
    # a small target: several files per bucket, all but one of each at least the target
    target = 16 << 10
    code, _ = _cli("ingest", str(corpus / "part-0.jsonl"), str(corpus / "part-1.jsonl"), "--engine", "spark",
                   "--store", str(small), "--buckets", "2", "--target-file-size", "16KB", "-q")
    assert code == 0
    engine.ingest(small, [corpus], chunk_bytes=1, target_file_size=target)  # the next ingest tops them up
    steps = _files(small, "steps")
    for bucket in ("ep_bucket=0", "ep_bucket=1"):
        sizes = sorted((f["size_bytes"] for f in steps if f["path"].startswith(bucket)), reverse=True)
        assert len(sizes) > 1 and all(size >= target for size in sizes[:-1]), (bucket, sizes)
    code, out = _cli("sql", "--store", str(small), "--format", "csv", "SELECT count(*) FROM episodes")
    assert int(out.splitlines()[1]) == 180
    assert not any((small / t / "_staging").exists() for t in PARTITIONED)  # staged chunks removed
    code, _ = _cli("check", str(SUITE), "--engine", "spark", "--store", str(small))
    assert code == 1
    assert len(_files(small, "check_results")) == engine.TIMINGS["check_tasks"]  # each task's rows: one file
    refused = CliRunner().invoke(cli, ["check", str(SUITE), "--target-file-size", "1MB", "--store",
                                       str(tmp_path / "d.duckdb")])
    assert refused.exit_code == 2 and "--target-file-size applies to --engine spark" in refused.output


def test_a_check_that_selects_no_run_is_saved_and_viewed(spark: object, tmp_path: Path) -> None:
    """No verdict row at all: the summaries are empty, the saved tables exist all the same."""
    from tests.conftest import episode

    trace = tmp_path / "in.jsonl"
    trace.write_text(json.dumps(episode("r1", {"kind": "assistant", "text": "hi"}, case_id="none-of-them")) + "\n")
    engine.ingest(tmp_path / "store", [trace])
    code, out = _cli("check", str(SUITE), "--engine", "spark", "--store", str(tmp_path / "store"))
    assert code == 1 and "0/0 runs" in out
    code, out = _cli("sql", "--store", str(tmp_path / "store"), "--format", "csv",
                     "SELECT (SELECT count(*) FROM check_results), (SELECT runs FROM check_runs)")
    assert out.splitlines()[1] == "0,0"
    code, _ = _cli("view", "--store", str(tmp_path / "store"), "-o", str(tmp_path / "r.html"))
    assert code == 0


def test_a_since_task_reads_only_the_earlier_files_of_its_buckets() -> None:
    """`check --since`: the earlier check's task t of n wrote buckets b % n == t; a task of the new
    check (here buckets 1 and 5 of 8, as task 1 of 4 holds them) reads those files, and any file
    not named so (written before files were named by task)."""
    from tracelab.spark.tasks import carried_files

    files = ["r1-t00000-of00002-000.parquet", "r1-t00001-of00002-000.parquet", "r1-t00001-of00002-001.parquet",
             "part-00000-abc-c000.snappy.parquet"]
    assert carried_files("r1", files, [1, 5]) == files[1:]
    assert carried_files("r1", files, [0, 4]) == [files[0], files[3]]
