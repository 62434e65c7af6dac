"""Faults lose nothing: a busy store is a clear exit 3 (or a wait, with `ingest --wait`), a full
disk rolls the file back, and the store still opens with everything committed before.

The kill -9 case is tests/cli/test_ingest_cli.py::test_kill_during_ingest_leaves_only_completed_files.
"""
from __future__ import annotations

import base64
import json
import os
import random
import resource
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import episode
from tests.reliability.support import Holder, run_cli, start_tracelab, tracelab
from tracelab.errors import StoreError
from tracelab.store import open_store

SUITE = """\
suite: busy
min_cases: 1
cases:
  - id: all
    select: {}
    expect: {must_not_leak: [secret]}
"""


def _traces(folder: Path, name: str, *ids: str) -> Path:
    path = folder / name
    path.write_text("".join(json.dumps(episode(i, {"kind": "user", "text": "hi"})) + "\n" for i in ids))
    return path


def _busy(store: Path, pid: int, then: str = "wait for it to finish and try again") -> str:
    return (f"error: {store} is busy: it is locked by process {pid} (another tracelab or DuckDB "
            f"session); {then}\n")


def _stored(store: Path) -> tuple[list[tuple[str]], list[tuple[str]]]:
    with open_store(store, read_only=True) as opened:
        return (opened.sql("SELECT episode_id FROM episodes ORDER BY 1").rows(),
                opened.sql("SELECT source_uri FROM sources ORDER BY 1").rows())


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path, Path]:
    return (_traces(tmp_path, "a.jsonl", "a1", "a2"), _traces(tmp_path, "b.jsonl", "b1"),
            _traces(tmp_path, "c.jsonl", "c1"))


def test_a_second_writer_gets_exit_3_and_nothing_is_corrupted(tmp_path, files):
    a, b, c = files
    store = tmp_path / "s.duckdb"

    with Holder(store, a, b) as holder:  # stopped inside b's transaction
        second = run_cli("ingest", str(c), "--store", str(store), "-q")

    assert second == (3, "", _busy(store, holder.pid))
    assert holder.result == "done 3 0"
    assert _stored(store) == ([("a1",), ("a2",), ("b1",)], [(str(a),), (str(b),)])
    assert run_cli("ingest", str(c), "--store", str(store), "-q")[0] == 0
    assert _stored(store)[0] == [("a1",), ("a2",), ("b1",), ("c1",)]


def test_readers_while_an_ingest_runs_say_the_store_is_busy(tmp_path, files):
    a, b, _ = files
    store = tmp_path / "s.duckdb"
    (tmp_path / "suite.yaml").write_text(SUITE)
    assert run_cli("ingest", str(a), "--store", str(store), "-q")[0] == 0

    suite = str(tmp_path / "suite.yaml")
    with Holder(store, b) as holder:
        runs = {
            "sql": run_cli("sql", "SELECT count(*) FROM episodes", "--store", str(store)),
            "info": run_cli("info", "--store", str(store)),
            "check": run_cli("check", suite, "--store", str(store)),
            "check --no-save": run_cli("check", suite, "--no-save", "--store", str(store)),
            "cover": run_cli("cover", suite, "--store", str(store)),
        }

    for command, result in runs.items():
        assert (command, *result) == (command, 3, "", _busy(store, holder.pid))
    assert _stored(store)[0] == [("a1",), ("a2",), ("b1",)]


def test_ingest_wait_waits_for_the_writer_then_loads(tmp_path, files):
    a, b, c = files
    store = tmp_path / "s.duckdb"

    with Holder(store, a, b):
        waiting = start_tracelab("ingest", str(c), "--store", str(store), "-q", "--wait", "120")
        time.sleep(1.0)  # long enough to have been refused a few times
        assert waiting.poll() is None, waiting.communicate()
    out, err = waiting.communicate(timeout=120)

    assert (waiting.returncode, err) == (0, "")
    assert out.startswith("1 episode added, 0 skipped (already ingested), 0 quarantined")
    assert _stored(store)[0] == [("a1",), ("a2",), ("b1",), ("c1",)]


def test_ingest_wait_gives_up_after_its_seconds(tmp_path, files):
    a, b, c = files
    store = tmp_path / "s.duckdb"

    with Holder(store, a, b) as holder:
        late = run_cli("ingest", str(c), "--store", str(store), "-q", "--wait", "0.5")
        with pytest.raises(StoreError) as refused:
            open_store(store, wait=0.2)

    assert late == (3, "", _busy(store, holder.pid, "still busy after waiting 0.5 s; try again later"))
    assert str(refused.value) == _busy(store, holder.pid, "still busy after waiting 0.2 s; try again later")[7:-1]
    assert _stored(store)[1] == [(str(a),), (str(b),)]


# --- a full disk ------------------------------------------------------------------------------

def _big_file(folder: Path) -> Path:
    """4.7 MB of episodes whose text does not compress away."""
    rng = random.Random(1)
    path = folder / "big.jsonl"
    with path.open("w") as fh:
        for i in range(3000):
            text = base64.b64encode(rng.randbytes(1125)).decode()
            fh.write(json.dumps(episode(f"big{i}", {"kind": "assistant", "text": text})) + "\n")
    return path


def _mounted_tmpfs(folder: Path, size: str) -> bool:
    folder.mkdir()
    if os.geteuid() != 0:
        return False
    return subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
                          capture_output=True).returncode == 0


def _limit_file_size(limit: int):  # type: ignore[no-untyped-def]
    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


@pytest.mark.parametrize("fault", ["full-tmpfs", "file-size-limit"])
def test_a_full_disk_rolls_the_file_back_with_exit_3(tmp_path, files, fault):
    a, _, _ = files
    big = _big_file(tmp_path)
    disk = tmp_path / "disk"
    limit = {}
    if fault == "full-tmpfs":
        if not _mounted_tmpfs(disk, "4m"):
            pytest.skip("mounting a tmpfs needs root (the file-size-limit case runs instead)")
    else:
        disk.mkdir()
    store = disk / "s.duckdb"
    try:
        assert run_cli("ingest", str(a), "--store", str(store), "-q")[0] == 0
        if fault == "file-size-limit":
            limit = {"preexec_fn": _limit_file_size(store.stat().st_size + (1 << 20))}

        failed = tracelab("ingest", str(big), "--store", str(store), "-q", **limit)

        reason = "No space left on device" if fault == "full-tmpfs" else "File too large"
        assert failed.returncode == 3
        assert failed.stderr.startswith(f"error: {big}: not loaded, the store could not be written (")
        assert failed.stderr.endswith(f"{reason}); the files before it are stored\n")
        assert "Traceback" not in failed.stderr
        assert _stored(store) == ([("a1",), ("a2",)], [(str(a),)])
    finally:
        if fault == "full-tmpfs":
            subprocess.run(["umount", str(disk)], check=True)
