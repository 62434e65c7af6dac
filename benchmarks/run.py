"""`make bench`: every benchmark in one run, side by side; writes results/latest.json and BENCHMARKS.md."""
from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import adapter_bench  # noqa: E402
import check_bench  # noqa: E402
import cover_bench  # noqa: E402
import effects_bench  # noqa: E402
import ingest_bench  # noqa: E402
import leak_bench  # noqa: E402
import million_bench  # noqa: E402
import per_file_bench  # noqa: E402
import sequence_bench  # noqa: E402
import spark_bench  # noqa: E402
import view_bench  # noqa: E402
from common import RESULTS, ROOT, Run, compiled, machine, write_results  # noqa: E402

SECTIONS = ("ingest", "per_file", "check", "cover", "effects", "scaling", "million", "sequence", "leak", "adapters",
            "view", "spark")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--episodes", type=int, default=100_000, help="corpus size (default 100k)")
    parser.add_argument("--scaling", default=",".join(map(str, check_bench.SCALING)),
                        help="corpus sizes of the check scaling run, comma-separated ('' skips it)")
    parser.add_argument("--only", default="",
                        help=f"run only these sections, comma-separated ({', '.join(SECTIONS)}); the "
                             "others keep their figures from the last results/latest.json")
    parser.add_argument("--spark-episodes", type=int, default=1_000_000,
                        help="runs of the Spark section, local[2] (default 1M)")
    parser.add_argument("--million-episodes", type=int, default=million_bench.EPISODES,
                        help="runs of the saved-check, handwritten.sql and --since section (default 1M)")
    parser.add_argument("--million-repeat", type=int, default=million_bench.REPEAT,
                        help="timed runs per side of that section, in turn (default 2)")
    args = parser.parse_args()
    only = {name.strip() for name in args.only.split(",") if name.strip()} or set(SECTIONS)
    unknown = only - set(SECTIONS)
    if unknown:
        parser.error(f"unknown sections: {', '.join(sorted(unknown))}")
    compiled()
    results: dict[str, object] = previous_results() if only != set(SECTIONS) else {}
    results.update({
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine(),
    })
    if "ingest" in only:
        results["ingest"] = ingest = ingest_bench.run(args.episodes)
        print(f"ingest: {ingest['ratio']}x bare read_json ({ingest['mb_per_s']} MB/s, "
              f"{ingest['episodes_per_s']:,} episodes/s, peak RSS {ingest['tracelab_ingest'].peak_rss_mib} MiB)")
    if "per_file" in only:
        results["per_file"] = per_file = per_file_bench.run(args.episodes)
        print(per_file_bench.summary(per_file))
    if "check" in only:
        results["check"] = chk = check_bench.run(args.episodes)
        print(f"check: {chk['ratio']}x the speed of pyeval ({chk['verdicts']:,} identical verdicts; "
              f"tracelab {chk['tracelab_check'].seconds} s, peak RSS {chk['tracelab_check'].peak_rss_mib} MiB; "
              f"pyeval {chk['pyeval'].seconds} s, peak RSS {chk['pyeval'].peak_rss_mib} MiB; "
              f"CLI with JSON of every row {chk['tracelab_cli_json'].seconds} s); "
              f"{chk['ratio_vs_handwritten']}x the time of hand-written SQL ({chk['handwritten_sql'].seconds} s)")
    if "cover" in only:
        results["cover"] = cov = cover_bench.run(args.episodes)
        print(cover_bench.summary(cov))
    if "effects" in only:
        results["effects"] = eff = effects_bench.run(args.episodes)
        print(effects_bench.summary(eff))
    sizes = tuple(int(n) for n in args.scaling.split(",") if n.strip())
    if sizes and "scaling" in only:
        results["scaling"], results["memory"] = scale, memory = check_bench.scaling(sizes)
        print(f"check scaling: exponent {scale['exponent']} over {', '.join(scale['points'])} episodes")
        if memory:
            print(f"memory at {memory['episodes']:,} episodes: ingest {memory['ingest'].peak_rss_mib} MiB, "
                  f"check {memory['check'].peak_rss_mib} MiB peak RSS")
    if "million" in only:
        chk = results.get("check")
        per_run = chk["pyeval"].seconds / chk["episodes"] if isinstance(chk, dict) else None
        results["million"] = million = million_bench.run(args.million_episodes, per_run, args.million_repeat)
        print(million_bench.summary(million))
    if "sequence" in only:
        results["sequence"] = sequence = sequence_bench.run()
        print(sequence_bench.summary(sequence))
    if "leak" in only:
        results["leak_search"] = leak = leak_bench.run(args.episodes)
        print(leak_bench.summary(leak))
    if "view" in only:
        results["view"] = view = view_bench.run(args.episodes)
        print(view_bench.summary(view))
    if "adapters" in only:
        results["adapters"] = adapters = adapter_bench.run()
        for figures in adapters.values():
            print(adapter_bench.summary(figures))
    if "spark" in only:
        # two sizes: the 100M estimate is drawn through them (spark_bench.estimate)
        results["spark"] = spark = {"small": spark_bench.run(100_000), "large": spark_bench.run(args.spark_episodes)}
        for figures in spark.values():
            print(spark_bench.summary(figures))
    out = write_results(results)
    write_markdown(results)
    print(f"results: {out}")


def previous_results() -> dict[str, object]:
    """The last results/latest.json, its measured runs as `Run`s again (for `--only`)."""
    path = RESULTS / "latest.json"
    if not path.exists():
        return {}

    def revive(value: object) -> object:
        if isinstance(value, dict):
            if set(value) == {"seconds", "peak_rss_mib"}:
                return Run(**value)
            return {k: revive(v) for k, v in value.items()}
        if isinstance(value, list):
            return [revive(v) for v in value]
        return value

    return revive(json.loads(path.read_text()))  # type: ignore[return-value]


def write_markdown(results: dict) -> None:
    m, ing = results["machine"], results["ingest"]
    lines = [
        "# Benchmarks",
        "",
        "Written by `make bench` (benchmarks/run.py); figures from one run, measured side by side.",
        "Compared commands run in turn, a few times each, and the fastest run of each counts: the",
        "machine is a shared 2-CPU host whose speed drifts by up to a third between minutes (the",
        "runs behind each figure are in benchmarks/results/latest.json, `all_runs_s`). tracelab is",
        "byte-compiled first, as `pip install` leaves it (`common.compiled`).",
        "",
        f"- date: {results['date']}",
        f"- machine: {m['platform']}, {m['cpus']} CPUs, Python {m['python']}, DuckDB {m['duckdb']}",
        "",
        "| benchmark | corpus | tracelab | baseline | ratio | target |",
        "|---|---|---|---|---|---|",
        f"| ingest vs bare `read_json` | {ing['episodes']:,} episodes, {ing['file_mb']} MB "
        f"| {ing['tracelab_ingest'].seconds} s ({ing['mb_per_s']} MB/s, {ing['episodes_per_s']:,} ep/s, "
        f"peak RSS {ing['tracelab_ingest'].peak_rss_mib} MiB; runs {runs(ing, 'ours')}) "
        f"| {ing['bare_read_json'].seconds} s (runs {runs(ing, 'bare')}) "
        f"| {ing['ratio']}x | <= 1.5x (issue 6; issue 2: <= 2.0x) |",
    ]
    if "per_file" in results:
        lines.append(per_file_bench.row(results["per_file"]))
    if "check" in results:
        lines.append(check_row(results["check"]))
    if "cover" in results:
        lines.append(cover_bench.row(results["cover"]))
    if "effects" in results:
        lines.append(effects_bench.row(results["effects"]))
    if "scaling" in results:
        lines.append(scaling_row(results["scaling"]))
    if results.get("memory"):
        lines.append(memory_row(results["memory"]))
    if "million" in results:
        lines.extend(million_bench.rows(results["million"]))
    if "sequence" in results:
        lines.append(sequence_bench.row(results["sequence"]))
    if "leak_search" in results:
        lines.append(leak_bench.markdown_row(results["leak_search"]))
    if "view" in results:
        lines.append(view_bench.row(results["view"]))
    if "adapters" in results:
        lines.extend(adapter_bench.row(figures) for figures in results["adapters"].values())
    spark = results.get("spark")
    if isinstance(spark, dict) and {"small", "large"} <= set(spark):  # an earlier run kept one size only
        lines.extend(spark_bench.rows(spark["small"], spark["large"], "not re-measured"))
    lines.extend(profile_sections())
    (ROOT.parent / "BENCHMARKS.md").write_text("\n".join(lines) + "\n")


PROFILES = {
    "before": "Where `check` spent its time at 1M runs before issue 27's changes",
    "after": "Where `check` spends its time at 1M runs after issue 27's changes",
    "since": "Where `check --since` spends its time over 1M stored runs and 10k new ones, after issue 27's changes",
}
"""The check profiles kept in results/ (benchmarks/check_profile.py --out results/check-profile-NAME.md)."""


def profile_sections() -> list[str]:
    """The saved check profiles, each under its heading (benchmarks/check_profile.py writes them)."""
    lines: list[str] = []
    for name, title in PROFILES.items():
        path = RESULTS / f"check-profile-{name}.md"
        if path.exists():
            lines += ["", f"## {title} (benchmarks/check_profile.py)", "", path.read_text().rstrip()]
    notes = RESULTS / "check-profile-notes.md"
    if notes.exists():
        lines += ["", notes.read_text().rstrip()]
    return lines


def runs(figures: dict, side: str) -> str:
    """The seconds of every run of one side, as `a / b`."""
    return " / ".join(f"{s} s" for s in figures.get("all_runs_s", {}).get(side, []))


def check_row(chk: dict) -> str:
    """The BENCHMARKS.md row of the check benchmark (check_bench.py)."""
    ours, base, cli = chk["tracelab_check"], chk["pyeval"], chk["tracelab_cli_json"]
    return (f"| `check` of benchmarks/suite.yaml vs per-episode Python (pyeval.py), both writing the "
            f"verdicts as Parquet | {chk['episodes']:,} episodes, "
            f"{chk['cases']} cases, {chk['case_assertions']} (case, assertion) ids, "
            f"{chk['verdicts']:,} identical verdicts "
            f"| {ours.seconds} s (peak RSS {ours.peak_rss_mib} MiB; runs {runs(chk, 'ours')}; "
            f"the CLI with `--format json "
            f"--all-results`: {cli.seconds} s) "
            f"| {base.seconds} s (peak RSS {base.peak_rss_mib} MiB; runs {runs(chk, 'pyeval')}) "
            f"| {chk['ratio']}x speed-up "
            f"| >= {chk['target']:g}x speed-up |\n"
            f"| `check` vs hand-written DuckDB SQL for the same suite (benchmarks/handwritten.sql), "
            f"same verdicts | {chk['episodes']:,} episodes | {ours.seconds} s | {chk['handwritten_sql'].seconds} s "
            f"| {chk['ratio_vs_handwritten']}x the time | <= {chk['target_vs_handwritten']:g}x |")


def scaling_row(scale: dict) -> str:
    """The BENCHMARKS.md row of the check scaling run (check_bench.scaling)."""
    points = ", ".join(f"{int(n):,}: {run.seconds} s" for n, run in scale["points"].items())
    skipped = "".join(f"; {int(n):,} skipped: {why}" for n, why in scale["skipped"].items())
    return (f"| `check` time over corpus size (library, verdicts to Parquet) | {points}{skipped} "
            f"| exponent {scale['exponent']} (least squares, log-log) | | | <= {scale['target']} |")


def memory_row(memory: dict) -> str:
    """The BENCHMARKS.md row of peak RSS at the largest scaling size."""
    return (f"| peak RSS, DuckDB memory_limit {memory['memory_limit']} | {memory['episodes']:,} episodes "
            f"| ingest {memory['ingest'].peak_rss_mib} MiB ({memory['ingest'].seconds} s), "
            f"check {memory['check'].peak_rss_mib} MiB ({memory['check'].seconds} s) | | "
            f"| < {memory['target_mib']:g} MiB each |")


if __name__ == "__main__":
    main()
