"""Report files (issue 29, "Security" and "Data loss"): a temporary is created exclusively, so a
link planted where it goes is never written through; `-o` naming a symlink writes the file it
points to (the link stays); `-o` naming a device or a FIFO is written through, never replaced."""
from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.reliability.support import run_cli

NATIVE = REPO / "sample_traces" / "native"
SUITE = str(REPO / "sample_traces" / "suite.yaml")


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> str:
    path = str(tmp_path_factory.mktemp("files") / "s.duckdb")
    assert run_cli("ingest", str(NATIVE / "shifts.jsonl"), "--store", path, "-q")[0] == 0
    assert run_cli("check", SUITE, "--store", path)[0] == 1  # a saved check, for view
    return path


def writers(store: str, output: Path) -> dict[str, tuple[str, ...]]:
    """Every command that writes a file, writing `output`."""
    out = str(output)
    return {
        "check -o": ("check", SUITE, "--store", store, "--no-save", "-o", out),
        "check --format junit -o": ("check", SUITE, "--store", store, "--no-save", "--format", "junit", "-o", out),
        "check --export-baseline": ("check", SUITE, "--store", store, "--no-save", "--export-baseline", out),
        "view -o": ("view", "--store", store, "-o", out),
        "sql -o": ("sql", "SELECT episode_id FROM episodes", "--store", store, "-o", out),
        "sql --format parquet -o": ("sql", "SELECT episode_id FROM episodes", "--store", store,
                                    "--format", "parquet", "-o", out),
        "cover -o": ("cover", SUITE, "--store", store, "-o", out),
    }


def test_a_link_planted_at_a_temporary_name_is_never_written_through(store, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    output = tmp_path / "report.out"
    # where the temporaries used to go: `.<name>.<pid>.tmp` (check, sql, cover) and `<name>.partial` (view)
    for planted in (tmp_path / f".{output.name}.{os.getpid()}.tmp", tmp_path / f"{output.name}.partial"):
        planted.symlink_to(victim)
    for name, args in writers(store, output).items():
        code, _, err = run_cli(*args)
        assert code in (0, 1), (name, err)
        assert victim.read_text() == "precious\n", name
        assert output.is_file() and not output.is_symlink() and output.stat().st_size > 0, name
        output.unlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [f".report.out.{os.getpid()}.tmp", "report.out.partial", "victim.txt"])  # no temporary left


def test_an_output_that_is_a_symlink_writes_the_file_it_points_to(store, tmp_path):
    real = tmp_path / "real" / "report.out"
    real.parent.mkdir()
    link = tmp_path / "link.out"
    link.symlink_to(real)
    for name, args in writers(store, link).items():
        code, _, err = run_cli(*args)
        assert code in (0, 1), (name, err)
        assert link.is_symlink() and os.readlink(link) == str(real), name
        assert real.is_file() and real.stat().st_size > 0, name
        real.unlink()
    assert [p.name for p in real.parent.iterdir()] == []


def test_a_fifo_output_is_written_through_and_stays_a_fifo(store, tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for name, args in writers(store, fifo).items():
        received: list[bytes] = []
        reader = threading.Thread(target=lambda into=received: into.append(fifo.read_bytes()), daemon=True)
        reader.start()
        code, _, err = run_cli(*args)
        reader.join(timeout=60)
        assert code in (0, 1), (name, err)
        assert stat.S_ISFIFO(fifo.stat().st_mode), name
        assert received and received[0], name
    assert [p.name for p in tmp_path.iterdir()] == ["pipe"]


@pytest.fixture
def null_device(tmp_path) -> Path:
    """A character device that discards what is written: as root, a private copy of /dev/null
    (made with mknod), so that a failure cannot destroy the real one; else /dev/null itself,
    which a user cannot replace."""
    if os.geteuid() != 0:
        return Path("/dev/null")
    device = tmp_path / "null"
    try:
        os.mknod(device, 0o666 | stat.S_IFCHR, os.stat("/dev/null").st_rdev)
        device.write_bytes(b"x")
    except OSError as exc:  # no mknod here, or a file system mounted nodev
        pytest.skip(f"cannot make a private null device: {exc.strerror}")
    return device


def test_a_device_output_is_written_through_and_stays_a_device(store, null_device):
    before = os.stat(null_device)
    for name, args in writers(store, null_device).items():
        code, _, err = run_cli(*args)
        assert code in (0, 1), (name, err)
        after = os.stat(null_device)
        assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev, name


def test_a_new_report_gets_the_usual_permissions(store, tmp_path):
    mask = os.umask(0o022)
    os.umask(mask)
    output = tmp_path / "report.txt"
    assert run_cli(*writers(store, output)["check -o"])[0] == 1
    assert stat.S_IMODE(output.stat().st_mode) == 0o666 & ~mask
