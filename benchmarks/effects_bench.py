"""Registry cost: `check` on the check section's store, with and without 20 registry globs.

The store's `tool_effects` (docs/trace-format.md §6) are resolved once per distinct tool name, so 20
globs should cost next to nothing: target (issue 12) <= 1.1x the time without them. Both sides
are library checks in a subprocess, in turn, fastest of a few runs each; the globs side works
on a copy of the store, so the check section's store stays without a registry.
"""
from __future__ import annotations

import shutil

from check_bench import ENV, REPEAT, SUITE, ingested
from common import WORK, alternating, corpus, fastest, measure, python

from tracelab.store import open_store

CHECK = ("import sys\nfrom tracelab.results.check import check\n"
         "check(sys.argv[1], sys.argv[2], save=False).verdicts.write_parquet(sys.argv[3])\n")
TARGET = 1.1
GLOBS = {**{f"get_*{i}": "read" for i in range(10)}, **{f"*_update_{i}*": "write" for i in range(9)},
         "send_*": "write"}
"""20 globs, a few matching the synthetic corpus's tools, most matching none."""


def run(episodes: int) -> dict[str, object]:
    plain = ingested(corpus(episodes))
    declared = WORK / f"effects-{plain.name}"
    shutil.copyfile(plain, declared)
    with open_store(declared) as store:
        store.effects.set(GLOBS, note="benchmark")
    runs = alternating({
        side: (lambda path=path, side=side: measure(
            python(CHECK) + [str(path), str(SUITE), str(WORK / f"effects-{side}.parquet")], env=ENV))
        for side, path in (("plain", plain), ("globs", declared))
    }, REPEAT)
    plain_run, globs_run = fastest(runs["plain"]), fastest(runs["globs"])
    return {"episodes": episodes, "globs": len(GLOBS), "plain": plain_run, "with_globs": globs_run,
            "all_runs_s": {side: [r.seconds for r in measured] for side, measured in runs.items()},
            "ratio": round(globs_run.seconds / plain_run.seconds, 2), "target": TARGET}


def summary(figures: dict) -> str:
    return (f"effects: check with {figures['globs']} registry globs takes {figures['ratio']}x the time "
            f"without ({figures['with_globs'].seconds} s vs {figures['plain'].seconds} s at "
            f"{figures['episodes']:,} episodes; target <= {TARGET}x)")


def row(figures: dict) -> str:
    return (f"| `check` with {figures['globs']} `tracelab effects` globs vs none (library) "
            f"| {figures['episodes']:,} episodes | {figures['with_globs'].seconds} s "
            f"| {figures['plain'].seconds} s | {figures['ratio']}x the time | <= {TARGET}x |")


if __name__ == "__main__":
    import sys

    print(summary(run(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)))
