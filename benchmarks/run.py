"""`make bench`: every benchmark in one run, side by side; writes results/latest.json and BENCHMARKS.md."""
from __future__ import annotations

import argparse
import datetime
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import check_bench  # noqa: E402
import ingest_bench  # noqa: E402
from common import ROOT, machine, write_results  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--episodes", type=int, default=100_000, help="corpus size (default 100k)")
    args = parser.parse_args()
    results: dict[str, object] = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine(),
    }
    results["ingest"] = ingest = ingest_bench.run(args.episodes)
    print(f"ingest: {ingest['ratio']}x bare read_json ({ingest['mb_per_s']} MB/s, "
          f"{ingest['episodes_per_s']:,} episodes/s, peak RSS {ingest['tracelab_ingest'].peak_rss_mib} MiB)")
    results["check"] = chk = check_bench.run(args.episodes)
    print(f"check: {chk['ratio']}x the speed of pyeval ({chk['verdicts']:,} identical verdicts; "
          f"tracelab {chk['tracelab_check'].seconds} s, peak RSS {chk['tracelab_check'].peak_rss_mib} MiB; "
          f"pyeval {chk['pyeval'].seconds} s, peak RSS {chk['pyeval'].peak_rss_mib} MiB)")
    out = write_results(results)
    write_markdown(results)
    print(f"results: {out}")


def write_markdown(results: dict) -> None:
    m, ing = results["machine"], results["ingest"]
    lines = [
        "# Benchmarks",
        "",
        "Written by `make bench` (benchmarks/run.py); figures from one run, measured side by side.",
        "",
        f"- date: {results['date']}",
        f"- machine: {m['platform']}, {m['cpus']} CPUs, Python {m['python']}, DuckDB {m['duckdb']}",
        "",
        "| benchmark | corpus | tracelab | baseline | ratio | target |",
        "|---|---|---|---|---|---|",
        f"| ingest vs bare `read_json` | {ing['episodes']:,} episodes, {ing['file_mb']} MB "
        f"| {ing['tracelab_ingest'].seconds} s ({ing['mb_per_s']} MB/s, {ing['episodes_per_s']:,} ep/s, "
        f"peak RSS {ing['tracelab_ingest'].peak_rss_mib} MiB) | {ing['bare_read_json'].seconds} s "
        f"| {ing['ratio']}x | <= 2.0x |",
    ]
    if "check" in results:
        lines.append(check_row(results["check"]))
    (ROOT.parent / "BENCHMARKS.md").write_text("\n".join(lines) + "\n")


def check_row(chk: dict) -> str:
    """The BENCHMARKS.md row of the check benchmark (check_bench.py)."""
    ours, base = chk["tracelab_check"], chk["pyeval"]
    return (f"| `check` of benchmarks/suite.yaml vs per-episode Python (pyeval.py) | {chk['episodes']:,} episodes, "
            f"{chk['cases']} cases, {chk['case_assertions']} (case, assertion) ids, "
            f"{chk['verdicts']:,} identical verdicts "
            f"| {ours.seconds} s (peak RSS {ours.peak_rss_mib} MiB) "
            f"| {base.seconds} s (peak RSS {base.peak_rss_mib} MiB) | {chk['ratio']}x speed-up "
            f"| >= {chk['target']:g}x speed-up |")


if __name__ == "__main__":
    main()
