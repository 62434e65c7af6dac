"""`tracelab ingest ~/.claude/projects` at the shape it has on a developer's machine.

Builds a projects folder of Claude Code sessions from the hand-written sample
(sample_traces/claude-code): `--projects` folders of `--sessions` session
groups each, every group a copy of the sample's two sessions with fresh ids
(a session with a sub-agent file, a session resumed into a second file), each
conversation repeated `--repeat` times to reach a realistic length. Then
measures, in subprocesses on fresh stores: `tracelab ingest FOLDER` (every file
through detection, the adapter's session grouping and the bulk ingest path)
against `tracelab ingest ONE.jsonl` of the same episodes in the native format,
and a second `ingest FOLDER` over the loaded store (nothing new).

    .venv/bin/python benchmarks/session_bench.py --projects 4 --sessions 60
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import WORK, Run, alternating, fastest, fresh, measure, tracelab  # noqa: E402

SAMPLE = WORK.parent.parent / "sample_traces" / "claude-code" / "-home-dev-shop"
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def build(folder: Path, projects: int, sessions: int, repeat: int) -> int:
    """Write the projects folder; returns how many files it holds."""
    shutil.rmtree(folder, ignore_errors=True)
    template = {p.name: p.read_text(encoding="utf-8").splitlines() for p in sorted(SAMPLE.iterdir())}
    files = 0
    for project in range(projects):
        target = folder / f"-home-dev-project{project}"
        target.mkdir(parents=True)
        for group in range(sessions):
            tag = f"{project:02x}{group:06x}"
            for name, lines in template.items():
                out = [_renamed(line, tag, turn) for turn in range(repeat) for line in lines
                       if turn == 0 or '"type":"summary"' not in line]
                (target / _renamed(name, tag, 0)).write_text("\n".join(out) + "\n", encoding="utf-8")
                files += 1
    return files


def _renamed(text: str, tag: str, turn: int) -> str:
    """Every id gets the copy's 8-hex tag (so the sessions of a copy still link to each other),
    entry uuids also the turn's number (so a repeated turn is not read as a copy)."""

    def rename(found: re.Match[str]) -> str:
        uuid = found.group(0)
        if not uuid.startswith("0199c0de"):
            uuid = uuid[:9] + f"{turn:04x}" + uuid[13:]
        return uuid[:-12] + tag + uuid[-4:]

    return UUID.sub(rename, text).replace("a7f31c2", "a" + tag)


def native_copies(folder: Path, out: Path, per_file: Path) -> tuple[int, float]:
    """The same episodes in the native format, as one JSONL file and as one file per session
    file (read with the adapter itself); returns the episodes and the adapter's seconds."""
    from tracelab.formats import claude_code
    from tracelab.formats.source import Source

    seen: set[str] = set()
    shutil.rmtree(per_file, ignore_errors=True)
    per_file.mkdir(parents=True)
    start = time.perf_counter()
    read = [(path, list(claude_code.episodes(Source(path)))) for path in sorted(folder.rglob("*.jsonl"))]
    seconds = time.perf_counter() - start
    with open(out, "w", encoding="utf-8") as fh:
        for index, (_path, items) in enumerate(read):
            lines = [json.dumps(item[1], ensure_ascii=False) + "\n" for item in items if isinstance(item, tuple)]
            (per_file / f"{index:06d}.jsonl").write_text("".join(lines), encoding="utf-8")
            for item, line in zip([i for i in items if isinstance(i, tuple)], lines, strict=False):
                if item[1]["episode_id"] not in seen:
                    seen.add(item[1]["episode_id"])
                    fh.write(line)
    return len(seen), seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--projects", type=int, default=4)
    parser.add_argument("--sessions", type=int, default=60, help="session groups per project (4 files each)")
    parser.add_argument("--repeat", type=int, default=5, help="copies of each conversation in a session")
    parser.add_argument("--rounds", type=int, default=2, help="measurements of each side, fastest counts")
    args = parser.parse_args()
    folder = WORK / "claude-projects"
    files = build(folder, args.projects, args.sessions, args.repeat)
    size_mb = sum(p.stat().st_size for p in folder.rglob("*.jsonl")) / 1e6
    one, per_file = WORK / "claude-projects-native.jsonl", WORK / "claude-projects-native"
    episodes, adapter_seconds = native_copies(folder, one, per_file)
    store = WORK / "sessions.duckdb"

    def ingest(path: Path, into: Path) -> Callable[[], Run]:
        return lambda: measure(tracelab("ingest", str(path), "--store", str(fresh(into)), "--quiet"))

    # measured in turn, fastest of each: the host's speed drifts
    runs = alternating({"sessions": ingest(folder, store),
                        "native_files": ingest(per_file, WORK / "native-files.duckdb"),
                        "native_one": ingest(one, WORK / "native.duckdb")}, args.rounds)
    sessions_run, native_files, native_one = (fastest(runs[k]) for k in ("sessions", "native_files", "native_one"))
    rerun = measure(tracelab("ingest", str(folder), "--store", str(store), "--quiet"))
    print(f"{files} session files ({size_mb:.1f} MB, {episodes} episodes) in {args.projects} projects")
    print(f"the adapter alone, every file read with its session group: {adapter_seconds:.2f} s")
    print(f"ingest FOLDER: {sessions_run.seconds} s ({files / sessions_run.seconds:.1f} files/s, "
          f"peak RSS {sessions_run.peak_rss_mib} MiB)")
    print(f"ingest FOLDER again (nothing new): {rerun.seconds} s "
          f"({rerun.seconds / sessions_run.seconds:.0%} of the first)")
    print(f"the same episodes as native files, one per session file: {native_files.seconds} s "
          f"(folder of sessions: {sessions_run.seconds / native_files.seconds:.2f}x)")
    print(f"the same episodes as one native file: {native_one.seconds} s "
          f"(folder of sessions: {sessions_run.seconds / native_one.seconds:.1f}x)")


if __name__ == "__main__":
    main()
