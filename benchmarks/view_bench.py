"""View: `tracelab view` of a saved check vs the `tracelab check` that saved it (issue 13).

The check section's suite (42 cases, every assertion family) is checked and saved on a copy
of the check section's store; then `tracelab view` writes the report of that saved check. Both
are CLI runs in a subprocess, taken in turn (each round checks, then views the check it just
saved), the fastest of each counting. Targets: the report in under 2 s at 100k runs and its
file under 20 MB (issue 26: it holds every shown step's text whole, within its cap), and at
most 10% of the check's time (issue 13). The machine is shared and noisy: the ratio to the
check, measured in turn, is the steadier figure.
"""
from __future__ import annotations

import shutil

from check_bench import ENV, REPEAT, SUITE, ingested
from common import WORK, Run, compiled, corpus, fastest, measure, tracelab

TARGET = 0.10
"""The report's generation time over the check's."""
SECONDS_TARGET = 2.0
"""The report's generation time at 100k runs (issue 26)."""
SIZE_TARGET_MB = 20.0


def run(episodes: int) -> dict[str, object]:
    store = WORK / f"view-{episodes}.duckdb"
    shutil.copyfile(ingested(corpus(episodes)), store)
    report = WORK / "view-report.html"
    checks: list[Run] = []
    views: list[Run] = []
    for _ in range(REPEAT):
        # exit 1 only says that some case failed: the suite is made to fail on the corpus's flaws
        checks.append(measure(tracelab("check", str(SUITE), "--store", str(store)), env=ENV,
                              ok_exit=(0, 1)))
        views.append(measure(tracelab("view", "--store", str(store), "--output", str(report)), env=ENV))
    check, view = fastest(checks), fastest(views)
    return {
        "episodes": episodes,
        "check": check,
        "view": view,
        "all_runs_s": {"check": [r.seconds for r in checks], "view": [r.seconds for r in views]},
        "file_mb": round(report.stat().st_size / 1e6, 2),
        "share": round(view.seconds / check.seconds, 3),
        "target": TARGET,
        "size_target_mb": SIZE_TARGET_MB,
    }


def summary(figures: dict) -> str:
    return (f"view: the report of a saved check takes {figures['share']:.1%} of the check's time "
            f"({figures['view'].seconds} s vs {figures['check'].seconds} s at {figures['episodes']:,} "
            f"episodes; {figures['file_mb']} MB; targets < {SECONDS_TARGET:g} s, < {SIZE_TARGET_MB:g} MB, "
            f"<= {TARGET:.0%})")


def row(figures: dict) -> str:
    runs = figures["all_runs_s"]
    return (f"| `view` of a saved check vs the `check` that saved it (CLI) | {figures['episodes']:,} episodes, "
            f"{SUITE.name} | {figures['view'].seconds} s ({figures['file_mb']} MB; runs "
            f"{' / '.join(f'{s} s' for s in runs['view'])}) | {figures['check'].seconds} s (runs "
            f"{' / '.join(f'{s} s' for s in runs['check'])}) | {figures['share']:.1%} of the time "
            f"| < {SECONDS_TARGET:g} s, < {SIZE_TARGET_MB:g} MB; <= {TARGET:.0%} |")


if __name__ == "__main__":
    import sys

    compiled()
    print(summary(run(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)))
