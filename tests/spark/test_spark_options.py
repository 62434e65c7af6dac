"""`--engine spark` without starting Spark: lazy import, master resolution, usage errors, URLs,
the commit journal, and a task's work called directly."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from tests.conftest import episode
from tracelab.cli import cli
from tracelab.spark import paths, tasks
from tracelab.spark.engine import master_url
from tracelab.spark.layout import Change, commit, open_layout, recover


def test_help_and_commands_do_not_import_pyspark() -> None:
    code = ("import sys\nfrom tracelab.cli import main\n"
            "try:\n    main(['ingest', '--help'])\nexcept SystemExit:\n    pass\n"
            "assert 'pyspark' not in sys.modules, 'pyspark imported'\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "--engine [duckdb|spark]" in result.stdout and "--spark-master" in result.stdout


def test_master_comes_from_the_flag_then_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TRACELAB_SPARK_MASTER", raising=False)
    monkeypatch.delenv("SPARK_REMOTE", raising=False)
    assert master_url() == ("master", "local[*]")
    monkeypatch.setenv("SPARK_REMOTE", "sc://connect:15002")
    assert master_url() == ("remote", "sc://connect:15002")
    monkeypatch.setenv("TRACELAB_SPARK_MASTER", "spark://head:7077")
    assert master_url() == ("master", "spark://head:7077")
    assert master_url("local[2]") == ("master", "local[2]")


def test_spark_needs_a_store_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TRACELAB_STORE", raising=False)
    suite = tmp_path / "suite.yaml"
    suite.write_text("suite: s\ncases: []\n")
    result = CliRunner().invoke(cli, ["check", str(suite), "--engine", "spark"])
    assert result.exit_code == 2 and "--store DIR" in result.output
    (tmp_path / "x.duckdb").write_bytes(b"")
    result = CliRunner().invoke(cli, ["check", str(suite), "--engine", "spark", "--store", str(tmp_path / "x.duckdb")])
    assert result.exit_code == 3 and "is a file" in result.output
    result = CliRunner().invoke(cli, ["cover", str(suite), "--engine", "spark", "--store", str(tmp_path / "none")])
    assert result.exit_code == 3 and "no store at" in result.output
    result = CliRunner().invoke(cli, ["ingest", str(suite), "--buckets", "4", "--store", str(tmp_path / "d.duckdb")])
    assert result.exit_code == 2 and "--buckets" in result.output


def test_a_store_records_its_bucket_count(tmp_path: Path) -> None:
    layout = open_layout(tmp_path / "store", create=True, buckets=64)
    assert open_layout(tmp_path / "store", create=False).buckets == 64
    assert (tmp_path / "store" / "episodes").is_dir() and layout.buckets == 64
    with pytest.raises(Exception, match="has 64 ep_bucket partitions"):
        open_layout(tmp_path / "store", create=True, buckets=16)


def test_a_commit_killed_before_its_head_leaves_the_previous_store_and_recover_undoes_it(tmp_path: Path) -> None:
    """A run killed between its tables' Delta commits and the head's: readers still read the
    previous version of every table, and `recover` restores the tables it committed past the head."""
    from deltalake import DeltaTable

    from tracelab.store import open_store

    layout = open_layout(tmp_path / "store", create=True)
    versions = dict(layout.versions)
    part = tmp_path / "part.parquet"
    with duckdb.connect() as con:
        con.execute(f"COPY (SELECT 'a.jsonl' AS source_uri, 'h' AS content_hash) TO '{part}' (FORMAT parquet)")
    (tmp_path / "store" / "sources" / "x.parquet").write_bytes(part.read_bytes())
    add = Change([{"path": "x.parquet", "size": part.stat().st_size, "bucket": None, "rows": 1}], [])
    # the table's own commit, as `commit` makes it, but no head commit after it (the kill)
    table = DeltaTable(layout.table("sources"))
    from deltalake.transaction import AddAction

    table.create_write_transaction([AddAction("x.parquet", add.adds[0]["size"], {}, 0, True, '{"numRecords":1}')],
                                   "append", table.schema())
    assert DeltaTable(layout.table("sources")).version() > versions["sources"]
    with open_store(tmp_path / "store") as store:
        assert store.sql("SELECT count(*) FROM sources").item() == 0  # the head names the old version
    assert recover(open_layout(tmp_path / "store", create=False)) == 1
    assert DeltaTable(layout.table("sources")).to_pyarrow_table().num_rows == 0
    # a whole commit is seen
    committed = commit(open_layout(tmp_path / "store", create=False), {"sources": add})
    assert committed.versions["sources"] > versions["sources"]
    with open_store(tmp_path / "store") as store:
        assert store.sql("SELECT source_uri FROM sources").rows() == [("a.jsonl",)]


def _fake_bucket(monkeypatch: pytest.MonkeyPatch, root: Path) -> None:
    """s3a://bucket/... served by a local folder through pyarrow.fs (no network in tests)."""
    from pyarrow import fs as pafs

    def local(url: str) -> tuple[object, str]:
        scheme, _, rest = url.partition("://")
        assert paths.SCHEMES[scheme] == "s3"  # s3a is read as S3
        return pafs.LocalFileSystem(), str(root / rest)

    monkeypatch.setattr(paths, "filesystem", local)


def test_object_store_urls_are_listed_copied_and_recorded_under_their_url(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """What a task does with s3a:// inputs: the library ingests a local copy; every row and report
    names the URL, and an object that cannot be read is a failed file, not a failed task."""
    bucket = tmp_path / "bucket" / "traces"
    bucket.mkdir(parents=True)
    good = episode("r1", {"kind": "assistant", "text": "hi"})
    (bucket / "b.jsonl").write_text(json.dumps(good) + "\n" + "{not json\n", encoding="utf-8")
    (bucket / "a" / "x.jsonl").parent.mkdir()
    (bucket / "a" / "x.jsonl").write_text(json.dumps(episode("r2")) + "\n", encoding="utf-8")
    _fake_bucket(monkeypatch, tmp_path / "bucket")
    listed = paths.list_files("s3a://traces")
    assert [url for url, _ in listed] == ["s3a://traces/a/x.jsonl", "s3a://traces/b.jsonl"]
    files = [[url, None] for url, _ in listed] + [["s3a://traces/gone.jsonl", None]]
    staged = tmp_path / "store"  # the task writes into the store's table folders (uncommitted)
    out = tasks.ingest_chunk(0, files, "auto", False, str(staged), "wave", 16, None)
    assert [(f["path"], f["status"]) for f in out.files] == [
        ("s3a://traces/a/x.jsonl", "loaded"), ("s3a://traces/b.jsonl", "loaded"),
        ("s3a://traces/gone.jsonl", "failed")]
    assert out.files[2]["message"].startswith("s3a://traces/gone.jsonl: cannot be read")
    assert {p["table"] for p in out.parts} == {"episodes", "sources", "quarantine", "steps"}
    con = duckdb.connect()
    uris = {table: sorted({r[0] for r in con.execute(
        "SELECT source_uri FROM read_parquet(?, hive_partitioning = false)",
        [[str(p) for p in (staged / table).rglob("*.parquet")]]).fetchall()})
        for table in ("episodes", "sources", "quarantine")}
    assert uris == {"episodes": ["s3a://traces/a/x.jsonl", "s3a://traces/b.jsonl"],
                    "sources": ["s3a://traces/a/x.jsonl", "s3a://traces/b.jsonl"],
                    "quarantine": ["s3a://traces/b.jsonl"]}
    sizes = con.execute("SELECT DISTINCT file_size FROM read_parquet(?)",
                        [[str(p) for p in (staged / "sources").rglob("*.parquet")]]).fetchall()
    assert sizes == [(None,)]  # a copy's size and time say nothing about the object


def test_urls_the_engine_cannot_read_are_one_line_usage_errors(tmp_path: Path) -> None:
    assert paths.local_path(f"file://{tmp_path}/x y") == tmp_path / "x y"
    assert paths.local_path("file:///a%20b/c") == Path("/a b/c")
    suite = tmp_path / "suite.yaml"
    suite.write_text("suite: s\ncases: []\n")
    cases = [
        (["ingest", "hdfs://namenode:8020/traces", "--engine", "spark", "--store", str(tmp_path / "s")],
         "hdfs://namenode:8020/traces: the hdfs file system is not available here"),
        (["ingest", "ftp://host/traces", "--engine", "spark", "--store", str(tmp_path / "s")],
         "ftp://host/traces: --engine spark reads inputs that are local paths, file:// URLs or"),
        (["check", str(suite), "--engine", "spark", "--store", "ftp://host/store"],
         "ftp://host/store: --engine spark keeps its store on a path, a file:// URL or an object store"),
        (["ingest", str(suite), "--engine", "spark", "--store", "file://otherhost/store"],
         "a file:// URL names a local path"),
    ]
    for args, message in cases:
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 2, (args, result.output)
        assert message in result.output and len(result.output.strip().splitlines()) == 1, result.output
        assert "Traceback" not in result.output
    assert not (tmp_path / "s").exists()


def test_a_second_ingest_into_a_store_being_written_is_refused(tmp_path: Path) -> None:
    """Two Spark ingests committing into one store could both store a file: the second exits 3
    at once, before Spark starts, as a second writer of a busy DuckDB store does."""
    from tracelab.spark.layout import writer_lock

    trace = tmp_path / "a.jsonl"
    trace.write_text(json.dumps(episode("r1")) + "\n", encoding="utf-8")
    layout = open_layout(tmp_path / "store", create=True)
    with writer_lock(layout):
        result = CliRunner().invoke(cli, ["ingest", str(trace), "--engine", "spark", "--store", str(layout.root)])
        assert result.exit_code == 3 and "is busy: another `tracelab ingest --engine spark`" in result.output
        result = CliRunner().invoke(cli, ["ingest", str(trace), "--engine", "spark", "--store", str(layout.root),
                                          "--wait", "0.5"])
    assert result.exit_code == 3 and "still busy after waiting 0.5 s" in result.output
    assert not list((Path(layout.root) / "episodes").rglob("*-c*.parquet"))
    with writer_lock(layout):  # released: the next writer takes it
        pass


@pytest.mark.parametrize("engine", ["duckdb", "spark"])
def test_since_a_check_a_parquet_store_never_saved_is_a_usage_error(tmp_path: Path, engine: str) -> None:
    """`--since RUN_ID` on a Parquet store without `check_runs/` (no check saved into it yet):
    exit 2 naming the run id, not a DuckDB catalog error."""
    open_layout(tmp_path / "store", create=True)
    suite = tmp_path / "suite.yaml"
    suite.write_text("suite: s\nmin_cases: 1\ncases:\n  - id: c\n    expect: {must_not_leak: [x]}\n")
    result = CliRunner().invoke(cli, ["check", str(suite), "--since", "0123abcd", "--engine", engine,
                                      "--store", str(tmp_path / "store"), "--no-save"])
    assert result.exit_code == 2, result.output
    assert "--since 0123abcd: no saved check run with that id" in result.output
