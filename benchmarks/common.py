"""Shared benchmark plumbing: corpora, timed subprocesses with peak RSS, results."""
from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent
WORK = ROOT / "work"
RESULTS = ROOT / "results"
BIN = Path(sys.executable).parent


def compiled() -> None:
    """Byte-compile tracelab (and the benchmark scripts) once, as `pip install` does for a user.

    An editable install run with PYTHONDONTWRITEBYTECODE (as this project's machines set it)
    would otherwise compile every module from source in every timed command: about a tenth of
    a second for `tracelab view`, a cost no installed copy pays.
    """
    import compileall

    import tracelab

    compileall.compile_dir(Path(tracelab.__file__).parent, quiet=1)
    compileall.compile_dir(ROOT, maxlevels=0, quiet=1)


@dataclass
class Run:
    """One measured command: wall seconds and the peak RSS of its process, in MiB."""

    seconds: float
    peak_rss_mib: float


def measure(argv: list[str], *, env: dict[str, str] | None = None,
            ok_exit: tuple[int, ...] = (0,)) -> Run:
    """Run `argv` to completion; fail loudly if it exits with a code not in `ok_exit`."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env={**os.environ, **(env or {})},
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    stderr = proc.stderr.read().decode() if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) not in ok_exit:
        raise SystemExit(f"benchmark command failed ({status}): {' '.join(argv)}\n{stderr}")
    return Run(round(seconds, 3), round(usage.ru_maxrss / 1024, 1))


def alternating(sides: dict[str, Callable[[], Run]], rounds: int) -> dict[str, list[Run]]:
    """Each side's runs, measured in turn round after round: a machine whose speed drifts
    (a shared host) then slows every side alike. Callers quote the fastest run of each side."""
    runs: dict[str, list[Run]] = {name: [] for name in sides}
    for _ in range(rounds):
        for name, measured in sides.items():
            runs[name].append(measured())
    return runs


def fastest(runs: list[Run]) -> Run:
    """The fastest of a side's runs."""
    return min(runs, key=lambda r: r.seconds)


def python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def tracelab(*args: str) -> list[str]:
    return [str(BIN / "tracelab"), *args]


def corpus(episodes: int, seed: int = 7) -> Path:
    """The synthetic native corpus of that size, generated once and cached in benchmarks/work."""
    WORK.mkdir(parents=True, exist_ok=True)
    path = WORK / f"corpus-{episodes}-{seed}.jsonl"
    if not path.exists():
        print(f"generating {episodes:,} episodes -> {path}", flush=True)
        subprocess.run(tracelab("generate", str(path), "--episodes", str(episodes), "--seed", str(seed)),
                       check=True, stdout=subprocess.DEVNULL)
    return path


def copied_store(source: Path, target: Path) -> Path:
    """A copy of store `source` at `target` (any earlier one removed), written through to the disk.

    Untimed set-up: without the fsync the copy's dirty pages (about 1 GB at 1M runs) are still
    being written back when the timed check closes its store, and DuckDB's checkpoint, which
    syncs the file, waits for them (a close of 1.5 s then measured 4.7 s).
    """
    import shutil

    shutil.copyfile(source, fresh(target))
    with open(target, "rb+") as handle:
        os.fsync(handle.fileno())
    return target


def fresh(path: Path) -> Path:
    """`path` with any previous file (and its WAL) removed."""
    for p in (path, Path(f"{path}.wal")):
        if p.exists():
            p.unlink()
    return path


def machine() -> dict[str, object]:
    import duckdb

    return {"platform": platform.platform(), "python": platform.python_version(),
            "cpus": os.cpu_count(), "duckdb": duckdb.__version__}


def write_results(results: dict[str, object]) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / "latest.json"
    out.write_text(json.dumps(results, indent=2, default=lambda o: asdict(o)) + "\n")
    return out
