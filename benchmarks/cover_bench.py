"""Coverage vs check: `cover` aggregates one evaluation, so it should cost about what `check` costs.

Both run as library calls in a subprocess on the same store (the check section's), in turn,
fastest of a few runs each. Target (issue 4): cover <= 1.5x check.
"""
from __future__ import annotations

from check_bench import ENV, REPEAT, SUITE, ingested
from common import WORK, alternating, corpus, fastest, measure, python

CHECK = ("import sys\nfrom tracelab.results.check import check\n"
         "check(sys.argv[1], sys.argv[2], save=False).verdicts.write_parquet(sys.argv[3])\n")
COVER = ("import sys\nfrom tracelab.results.cover import cover\n"
         "cover(sys.argv[1], sys.argv[2]).table.write_parquet(sys.argv[3])\n")
TARGET = 1.5


def run(episodes: int) -> dict[str, object]:
    store = ingested(corpus(episodes))
    runs = alternating({
        "check": lambda: measure(python(CHECK) + [str(store), str(SUITE), str(WORK / "cover-check.parquet")],
                                 env=ENV),
        "cover": lambda: measure(python(COVER) + [str(store), str(SUITE), str(WORK / "cover.parquet")],
                                 env=ENV),
    }, REPEAT)
    check, cover = fastest(runs["check"]), fastest(runs["cover"])
    return {"episodes": episodes, "check": check, "cover": cover,
            "ratio": round(cover.seconds / check.seconds, 2), "target": TARGET}


def summary(figures: dict) -> str:
    return (f"cover: {figures['ratio']}x the time of check at {figures['episodes']:,} episodes "
            f"({figures['cover'].seconds} s vs {figures['check'].seconds} s; target <= {TARGET}x)")


def row(figures: dict) -> str:
    return (f"| `cover` vs `check` of benchmarks/suite.yaml (library, one evaluation each) "
            f"| {figures['episodes']:,} episodes | {figures['cover'].seconds} s "
            f"(peak RSS {figures['cover'].peak_rss_mib} MiB) | {figures['check'].seconds} s "
            f"| {figures['ratio']}x the time | <= {TARGET}x |")


if __name__ == "__main__":
    import sys

    print(summary(run(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)))
