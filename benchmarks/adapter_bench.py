"""Adapters: `tracelab ingest` of an OpenAI-chat and an OTLP corpus of at least 500 MiB each.

Each corpus is `tracelab generate --as FORMAT`, sized from a 1,000-episode
sample of the same seed and cached in benchmarks/work. The figure is one
`tracelab ingest FILE --store fresh.duckdb --quiet` in a subprocess: wall
seconds, MB/s (10^6 bytes of the file), episodes/s and its peak RSS, against
the target "peak RSS < 2 GiB". The store is then checked to hold every
episode, in the expected format, with nothing quarantined.
"""
from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

from common import WORK, fresh, measure, tracelab

FORMATS = ("openai-chat", "otlp")
MIN_BYTES = 500 * 2**20
"""Each corpus holds at least this much: 500 MiB (524 MB)."""
RSS_TARGET_MIB = 2048.0
"""Target: the peak RSS of `tracelab ingest` stays under 2 GiB."""
SAMPLE = 1_000
SEED = 7


def run() -> dict[str, dict[str, object]]:
    """`{format: figures}` for each of `FORMATS`."""
    return {fmt: measure_format(fmt) for fmt in FORMATS}


def measure_format(fmt: str) -> dict[str, object]:
    episodes, path = corpus(fmt)
    size_mb = path.stat().st_size / 1e6
    store = fresh(WORK / f"adapter-{fmt}.duckdb")
    ours = measure(tracelab("ingest", str(path), "--store", str(store), "--quiet"))
    check_store(store, fmt, episodes)
    return {
        "format": fmt,
        "episodes": episodes,
        "file_mb": round(size_mb, 1),
        "tracelab_ingest": ours,
        "mb_per_s": round(size_mb / ours.seconds, 1),
        "episodes_per_s": round(episodes / ours.seconds),
        "rss_target_mib": RSS_TARGET_MIB,
        "rss_target_met": ours.peak_rss_mib < RSS_TARGET_MIB,
    }


def corpus(fmt: str) -> tuple[int, Path]:
    """``(episodes, path)`` of the cached corpus of `fmt` holding at least `MIN_BYTES`."""
    WORK.mkdir(parents=True, exist_ok=True)
    sample = generate(WORK / f"adapter-sample-{fmt}.jsonl", fmt, SAMPLE)
    episodes = math.ceil(MIN_BYTES / (sample.stat().st_size / SAMPLE) * 1.03)
    sample.unlink()
    while True:
        path = WORK / f"adapter-{fmt}-{episodes}-{SEED}.jsonl"
        if not path.exists():
            print(f"generating {episodes:,} {fmt} episodes -> {path}", flush=True)
            generate(path, fmt, episodes)
        size = path.stat().st_size
        if size >= MIN_BYTES:
            return episodes, path
        episodes = math.ceil(episodes * MIN_BYTES / size * 1.01)  # the sample was not typical


def generate(path: Path, fmt: str, episodes: int) -> Path:
    subprocess.run(tracelab("generate", str(path), "--episodes", str(episodes), "--seed", str(SEED),
                            "--as", fmt), check=True, stdout=subprocess.DEVNULL)
    return path


def check_store(store: Path, fmt: str, episodes: int) -> None:
    """Exit non-zero unless the store holds `episodes` episodes read as `fmt`, none quarantined."""
    from tracelab.store import open_store

    with open_store(store) as opened:
        found = opened.sql("SELECT (SELECT count(*) FROM episodes) AS episodes, "
                           "(SELECT count(*) FROM quarantine) AS quarantined, "
                           "(SELECT string_agg(DISTINCT format) FROM sources) AS format").rows()
    if found != [(episodes, 0, fmt)]:
        raise SystemExit(f"adapters: {store} holds (episodes, quarantined, format) = {found[0]}, "
                         f"expected ({episodes}, 0, {fmt!r})")


def row(figures: dict[str, object]) -> str:
    """The BENCHMARKS.md row of one format's ingest."""
    ours = figures["tracelab_ingest"]
    met = "met" if figures["rss_target_met"] else "NOT met"
    return (f"| `ingest`, {figures['format']} corpus (adapter) | {figures['episodes']:,} episodes, "
            f"{figures['file_mb']} MB | {ours.seconds} s ({figures['mb_per_s']} MB/s, "
            f"{figures['episodes_per_s']:,} ep/s, peak RSS {ours.peak_rss_mib} MiB) | – | – "
            f"| peak RSS < {figures['rss_target_mib']:g} MiB: {met} |")


def summary(figures: dict[str, object]) -> str:
    """One line for the console."""
    ours = figures["tracelab_ingest"]
    met = "met" if figures["rss_target_met"] else "NOT met"
    return (f"adapters: {figures['format']} {figures['file_mb']} MB, {figures['mb_per_s']} MB/s, "
            f"{figures['episodes_per_s']:,} episodes/s, peak RSS {ours.peak_rss_mib} MiB "
            f"(< {figures['rss_target_mib']:g} MiB: {met})")


if __name__ == "__main__":
    for fmt in sys.argv[1:] or FORMATS:
        print(summary(measure_format(fmt)), flush=True)
