"""`tracelab ingest` from the outside: output, exit codes, atomicity under kill -9."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

from click.testing import CliRunner

import tracelab.ingest.batches as ingest_batches
from tests.conftest import episode
from tracelab.cli import cli
from tracelab.formats import all_formats
from tracelab.store import open_store

TRIED = ", ".join(module.name for module in all_formats())
"""The formats auto-detection tries, in order, as a skipped file's message lists them."""


def run(*args: str, env: dict | None = None):
    return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)


def test_ingest_prints_added_skipped_quarantined(tmp_path, write_jsonl):
    path = write_jsonl([episode("a"), "nope", episode("b")])
    store = str(tmp_path / "s.duckdb")

    first = run("ingest", str(path), "--store", store, "--quiet")
    second = run("ingest", str(path), "--store", store, "--quiet")

    assert (first.exit_code, first.stdout) == (
        0, "2 episodes added, 0 skipped (already ingested), 1 quarantined — 1 file (0 already ingested, "
           "0 not traces, 0 failed)\n")
    assert (second.exit_code, second.stdout) == (
        0, "0 episodes added, 2 skipped (already ingested), 0 quarantined — 1 file (1 already ingested, "
           "0 not traces, 0 failed)\n")


def test_store_from_environment(tmp_path, write_jsonl):
    path = write_jsonl([episode("a")])
    store = tmp_path / "env.duckdb"

    result = run("ingest", str(path), "--quiet", env={"TRACELAB_STORE": str(store)})

    assert (result.exit_code, result.stdout) == (
        0, "1 episode added, 0 skipped (already ingested), 0 quarantined — 1 file (0 already ingested, "
           "0 not traces, 0 failed)\n")
    with open_store(store) as reopened:
        assert reopened.sql("SELECT episode_id FROM episodes").rows() == [("a",)]


def test_missing_path_is_exit_2_without_traceback(tmp_path):
    missing = tmp_path / "missing.jsonl"
    result = CliRunner().invoke(cli, ["ingest", str(missing), "--store", str(tmp_path / "s")])
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", f"error: {missing}: no such file or folder\n")
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert not (tmp_path / "s").exists()


def _tracelab(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tracelab", *args], cwd=cwd, capture_output=True, text=True)


def test_user_errors_exit_with_code_and_one_line(tmp_path, write_jsonl):
    missing = _tracelab("ingest", "missing.jsonl", cwd=tmp_path)
    no_store = _tracelab("sql", "SELECT 1", cwd=tmp_path)
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "readme.txt").write_text("hello")
    no_traces = _tracelab("ingest", "empty", cwd=tmp_path)

    assert (missing.returncode, missing.stderr.strip()) == (2, "error: missing.jsonl: no such file or folder")
    assert (no_store.returncode, no_store.stderr.strip()) == (
        3, "error: no store at tracelab.duckdb; run `tracelab ingest` first")
    assert (no_traces.returncode, no_traces.stderr.splitlines()) == (2, [
        f"skipped: empty/readme.txt: no format claims this file (tried {TRIED})",
        "error: no trace files found in empty: no format claims any of them"])
    for result in (missing, no_store, no_traces):
        assert "Traceback" not in result.stderr


def test_kill_during_ingest_leaves_only_completed_files(tmp_path):
    small = tmp_path / "a_small.jsonl"
    small.write_text(json.dumps(episode("small-1")) + "\n")
    big = tmp_path / "b_big.jsonl"
    step = {"kind": "tool_call", "name": "lookup", "args": {"q": "x" * 300}}
    with big.open("w") as fh:
        for i in range(120_000):
            fh.write(json.dumps(episode(f"big-{i}", step, step, {"kind": "assistant", "text": "ok"})) + "\n")
    store = tmp_path / "s.duckdb"
    proc = subprocess.Popen([sys.executable, "-m", "tracelab", "ingest", str(small), str(big), "--store", str(store)],
                            stderr=subprocess.PIPE, text=True)
    assert proc.stderr.readline().startswith(f"loaded {small}")
    # kill only once a batch of the big file is staged and written into its open transaction
    # (a per-batch commit would then leave those rows behind)
    staged = proc.stderr.readline()
    batch = min(ingest_batches.BATCH_RECORDS, ingest_batches.STREAM_BATCH_RECORDS)
    assert staged.startswith(f"loading {big} (native): {batch} added so far"), staged
    assert proc.poll() is None, "the big file finished before the kill; make it bigger"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()

    with open_store(store) as reopened:
        assert reopened.sql("SELECT episode_id FROM episodes").rows() == [("small-1",)]
        assert reopened.sql("SELECT source_uri FROM sources").rows() == [(str(small),)]
        assert reopened.sql("SELECT count(*) FROM steps").item() == 0
        # the killed store takes the next ingest (no lock, staging or half-written block left);
        # a small file shows it as well as the big one would, in a fraction of the time
        later = tmp_path / "c_later.jsonl"
        later.write_text(json.dumps(episode("later-1", step)) + "\n")
        assert reopened.ingest([later]).added == 1
        assert reopened.sql("SELECT count(*) FROM steps").item() == 1


def test_ctrl_c_during_ingest_exits_130_with_one_line_and_keeps_the_completed_files(tmp_path):
    small = tmp_path / "a_small.jsonl"
    small.write_text(json.dumps(episode("small-1")) + "\n")
    big = tmp_path / "b_big.jsonl"
    step = {"kind": "tool_call", "name": "lookup", "args": {"q": "x" * 300}}
    with big.open("w") as fh:
        for i in range(60_000):
            fh.write(json.dumps(episode(f"big-{i}", step, {"kind": "assistant", "text": "ok"})) + "\n")
    store = tmp_path / "s.duckdb"
    proc = subprocess.Popen([sys.executable, "-m", "tracelab", "ingest", str(small), str(big), "--store", str(store)],
                            stderr=subprocess.PIPE, text=True)
    assert proc.stderr.readline().startswith(f"loaded {small}")
    assert proc.stderr.readline().startswith(f"loading {big}")  # a batch of it is in the open transaction
    os.kill(proc.pid, signal.SIGINT)
    rest = proc.stderr.read()
    assert proc.wait(timeout=120) == 130, rest
    assert "Traceback" not in rest and "Aborted" not in rest
    assert rest.strip().splitlines()[-1].endswith(
        "interrupted: 1 of 2 files done (1 loaded, 1 episode added); the other file was not loaded")

    with open_store(store) as reopened:
        assert reopened.sql("SELECT episode_id FROM episodes").rows() == [("small-1",)]
        assert reopened.sql("SELECT source_uri FROM sources").rows() == [(str(small),)]


def test_a_named_file_no_format_claims_exits_2_after_the_others_load(tmp_path):
    good = tmp_path / "good.jsonl"
    good.write_text(json.dumps(episode("g")) + "\n")
    notes = tmp_path / "notes.jsonl"
    notes.write_text('{"hello": "world"}\n')
    store = tmp_path / "s.duckdb"

    named = CliRunner().invoke(cli, ["ingest", str(good), str(notes), "--store", str(store), "-q"])
    in_folder = CliRunner().invoke(cli, ["ingest", str(tmp_path), "--store", str(tmp_path / "t.duckdb"), "-q"])

    assert named.exit_code == 2  # formats.md, Auto-detection
    assert f"{notes}: no format claims this file (named on the command line)" in named.output
    assert in_folder.exit_code == 0  # found in a folder: reported and counted, not an error
    with open_store(store) as reopened:
        assert reopened.sql("SELECT episode_id FROM episodes").rows() == [("g",)]
