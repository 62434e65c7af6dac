"""Parsing in worker processes (tracelab.ingest.parse_pool, issue 11): what ingest stores and reports is
the same with workers as without, in input order; a worker that dies loses nothing; Ctrl-C while
workers run is the usual one-line interrupt."""
from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import tracelab.formats.source as source
import tracelab.ingest.parse_pool as parse_pool
from tests.conftest import episode
from tracelab.store import open_store

TABLES = {
    "episodes": "SELECT * EXCLUDE (ingested_at) FROM episodes ORDER BY episode_id",
    "steps": "SELECT * FROM steps ORDER BY episode_id, idx",
    "tool_calls": "SELECT * FROM tool_calls ORDER BY episode_id, call_step_idx",
    "tool_definitions": "SELECT * FROM tool_definitions ORDER BY ALL",
    "quarantine": "SELECT * EXCLUDE (ingested_at) FROM quarantine ORDER BY source_uri, line",
    "sources": "SELECT * EXCLUDE (ingested_at) FROM sources ORDER BY source_uri",
}


def run(i: int, **fields: object) -> dict:
    return episode(f"r{i}", {"kind": "user", "text": f"task {i}"},
                   {"kind": "tool_call", "name": "lookup", "call_id": "c1", "args": json.dumps({"i": i})},
                   {"kind": "tool_result", "call_id": "c1", "text": "ok", "status": "ok"},
                   tools=[{"name": "lookup", "effect": "read"}], **fields)


def corpus(root: Path) -> Path:
    """Small files of several kinds (bad lines, not a trace, a duplicate, gzip, another format)
    and one large native file, streamed, with bad lines among its records."""
    for i in range(120):
        lines = [json.dumps(run(i, extra_key=i))]
        if i % 17 == 0:
            lines += ["{not json", "[1, 2, 3]"]
        if i % 23 == 0:
            lines.append(json.dumps(run(i + 10_000)))
        (root / f"{i // 40}").mkdir(parents=True, exist_ok=True)
        (root / f"{i // 40}" / f"run-{i:03d}.jsonl").write_text("\n".join(lines) + "\n")
    (root / "notes.txt").write_text("just some notes\n")
    (root / "copy.jsonl").write_bytes((root / "0" / "run-005.jsonl").read_bytes())
    with gzip.open(root / "zipped.jsonl.gz", "wt") as fh:
        fh.write(json.dumps(run(5000)) + "\n")
    (root / "chat.jsonl").write_text(json.dumps({"messages": [
        {"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}) + "\n")
    big = [json.dumps(run(20_000 + i)) for i in range(400)]
    big[7] = "{broken"
    big[150] = '"a string"'
    big[151] = json.dumps(run(20_003))  # the same episode id again, same content: skipped
    (root / "big.jsonl").write_text("\n".join(big) + "\n")
    return root


def ingest(store_path: Path, folder: Path, workers: int) -> tuple[list[tuple], dict[str, list[tuple]]]:
    with open_store(store_path) as store:
        report = store.ingest([folder], workers=workers)
        files = [(f.path, f.format, f.status, f.added, f.skipped, f.quarantined, f.message) for f in report.files]
        return files, {name: store.sql(query).rows() for name, query in TABLES.items()}


@pytest.fixture
def small_limits(monkeypatch):
    """Workers from the first byte, in small jobs; files over 4 KiB are streamed."""
    monkeypatch.setattr(parse_pool, "POOL_AFTER_BYTES", 0)
    monkeypatch.setattr(parse_pool, "JOB_BYTES", 3000)
    monkeypatch.setattr(parse_pool, "JOB_FILES", 7)
    monkeypatch.setattr(source, "WHOLE_FILE_LIMIT", 4096)
    started: list[bool] = []
    real_close = parse_pool.ParsePool.close
    monkeypatch.setattr(parse_pool.ParsePool, "close",
                        lambda self: (started.append(self._pool is not None), real_close(self))[1])
    return started


def test_workers_store_and_report_exactly_what_the_thread_does(tmp_path, monkeypatch, small_limits):
    folder = corpus(tmp_path / "corpus")
    alone = ingest(tmp_path / "alone.duckdb", folder, 0)
    assert small_limits == [False]
    pooled = ingest(tmp_path / "pooled.duckdb", folder, 2)
    assert small_limits == [False, True]  # the workers ran

    files, tables = alone
    assert pooled[0] == files
    for name in TABLES:
        assert pooled[1][name] == tables[name], name
    # the corpus exercised what it should: streamed bad lines, not a trace, a duplicate, gzip
    statuses = {Path(f[0]).name: f[2] for f in files}
    assert statuses["notes.txt"] == "not-a-trace" and statuses["copy.jsonl"] == "already-ingested"
    assert statuses["zipped.jsonl.gz"] == statuses["big.jsonl"] == statuses["chat.jsonl"] == "loaded"
    big = next(f for f in files if f[0].endswith("big.jsonl"))
    assert big[3:6] == (397, 1, 2)
    assert len(tables["episodes"]) == 120 + 6 + 1 + 1 + 397


def test_a_worker_that_dies_loses_nothing(tmp_path, monkeypatch, small_limits):
    folder = corpus(tmp_path / "corpus")
    alone = ingest(tmp_path / "alone.duckdb", folder, 0)

    real = parse_pool.ParsePool._pool_for
    submitted: list[int] = []

    def killing(self, size):
        pool = real(self, size)
        submitted.append(1)
        if pool is not None and len(submitted) == 3:
            for process in list(pool._processes.values()):  # the workers started by the first jobs
                process.kill()
                process.join()
        return pool

    broken: list[int] = []
    real_broken = parse_pool.ParsePool._broken
    monkeypatch.setattr(parse_pool.ParsePool, "_pool_for", killing)
    monkeypatch.setattr(parse_pool.ParsePool, "_broken", lambda self: (broken.append(1), real_broken(self))[1])
    pooled = ingest(tmp_path / "pooled.duckdb", folder, 2)
    assert broken  # the pool broke; the thread parsed its jobs and the rest
    assert pooled == alone


def test_bad_worker_count_is_a_usage_error(monkeypatch, tmp_path):
    from tests.reliability.support import run_cli

    monkeypatch.setenv("TRACELAB_WORKERS", "many")
    (tmp_path / "a.jsonl").write_text(json.dumps(run(1)) + "\n")
    code, _, err = run_cli("ingest", str(tmp_path / "a.jsonl"), "--store", str(tmp_path / "s.duckdb"))
    assert (code, err) == (2, "error: TRACELAB_WORKERS must be a whole number, not 'many'\n")


INTERRUPTED = textwrap.dedent("""
    import os, signal, sys
    import tracelab.ingest.batches as ingest_batches
    import tracelab.ingest.writer as ingest_writer
    import tracelab.ingest.parse_pool as parse_pool
    from tracelab.cli import main

    parse_pool.POOL_AFTER_BYTES = 0
    parse_pool.JOB_FILES = 5
    ingest_batches.BATCH_RECORDS = 20  # several transactions
    real = ingest_writer.run_script
    seen = []

    def interrupting(con, name, params=None):
        if name == "ingest/insert":
            seen.append(name)
            if len(seen) == 3:
                os.kill(os.getpid(), signal.SIGINT)
        return real(con, name, params)

    ingest_writer.run_script = interrupting
    main(sys.argv[1:])
""")


def test_ctrl_c_while_workers_parse_is_one_line_and_keeps_whole_files(tmp_path):
    folder = tmp_path / "runs"
    folder.mkdir()
    for i in range(200):
        (folder / f"run-{i:03d}.jsonl").write_text(json.dumps(run(i)) + "\n")
    store = tmp_path / "s.duckdb"
    proc = subprocess.run([sys.executable, "-c", INTERRUPTED, "ingest", str(folder), "--store", str(store), "--quiet"],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "TRACELAB_WORKERS": "2"})
    assert proc.returncode == 130, proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "interrupted:" in proc.stderr
    with open_store(store, read_only=True) as opened:
        stored, files, recorded = opened.sql(
            "SELECT (SELECT count(*) FROM episodes), count(*), coalesce(sum(episodes), 0) FROM sources").row(0)
    assert 0 < stored == recorded == files < 200  # whole files only, each with its sources row


KILLED = textwrap.dedent("""
    import os, sys, time
    import tracelab.ingest.batches as ingest_batches
    import tracelab.ingest.writer as ingest_writer
    import tracelab.ingest.parse_pool as parse_pool
    from tracelab.cli import main

    parse_pool.POOL_AFTER_BYTES = 0
    parse_pool.JOB_FILES = 5
    ingest_batches.BATCH_RECORDS = 20
    real = ingest_writer.run_script
    seen = []

    def stalling(con, name, params=None):
        if name == "ingest/insert":
            seen.append(name)
            if len(seen) == 2:
                print("killing", flush=True)
                time.sleep(60)  # killed here, the workers busy with the jobs ahead
        return real(con, name, params)

    ingest_writer.run_script = stalling
    main(sys.argv[1:])
""")


def _marked(mark: str) -> list[int]:
    """The processes whose environment holds `mark`."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if mark.encode() in (entry / "environ").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux /proc to find the workers")
def test_workers_end_when_the_ingest_is_killed(tmp_path):
    import time

    folder = tmp_path / "runs"
    folder.mkdir()
    for i in range(300):
        (folder / f"run-{i:03d}.jsonl").write_text(json.dumps(run(i)) + "\n")
    mark = f"TRACELAB_TEST_MARK={tmp_path.name}"
    proc = subprocess.Popen([sys.executable, "-c", KILLED, "ingest", str(folder), "--store", str(tmp_path / "s.duckdb"),
                             "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "TRACELAB_WORKERS": "2", "TRACELAB_TEST_MARK": tmp_path.name})
    try:
        assert proc.stdout.readline() == "killing\n"
        assert len(_marked(mark)) >= 3  # the ingest, the fork server and its workers
        proc.kill()
        proc.wait(timeout=30)
        deadline = time.monotonic() + 20
        while _marked(mark) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _marked(mark) == []  # no worker (or fork server) is left behind
    finally:
        proc.kill()
