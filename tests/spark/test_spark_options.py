"""`--engine spark` options without starting Spark: lazy import, master resolution, usage errors."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from tracelab.cli import cli
from tracelab.spark.engine import master_url
from tracelab.spark.layout import open_layout


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
