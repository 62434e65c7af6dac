"""Sequence rules on one long run: `check` of sequence_valid and trace_tool_sequence on an
episode of 300,000 tool calls must stay near-linear in the calls of a run (issue 14, item 5).

The run alternates `lookup` and `assign` calls, with every 1,000th `assign` missing (so the
`after` rule fails late) and a `delete` near the end (so `never_after` fails late);
`latest_before` looks up, for every `assign`, the `lookup` before it. The check
runs as a library call in a subprocess, fastest of a few runs. Target: under 30 s at 300k calls
(before: 120 s for an `after` rule alone), and about 10x the time at 10x the calls.
"""
from __future__ import annotations

import json
import math

from common import WORK, alternating, fastest, fresh, measure, python, tracelab

CALLS = 300_000
SMALL = 30_000
TARGET_SECONDS = 30.0
REPEAT = 2
SUITE = """\
suite: long-run
min_cases: 1
cases:
  - id: long
    expect: {must_not_leak: [sk-live-]}
    assertions:
      - type: sequence_valid
        rules:
          - {type: after, trigger: lookup, then: assign, within: 1}
          - {type: after, trigger: lookup, then: assign, within: 50}
          - {type: before, first: lookup, then: assign}
          - {type: never_after, trigger: assign, forbidden: delete}
          - {type: eventually, tool: assign, within: 5}
          - {type: sequence, tools: [lookup, assign, delete]}
          - {type: sequence, tools: [lookup, assign], strict: true}
          - {type: max_calls, tool: delete, max: 0}
          - {type: latest_before, then: assign, latest: lookup, status: [missing], required: true}
      - {type: trace_tool_sequence, sequence: [lookup, assign, delete], allow_other_tools: true}
"""
CHECK = ("import sys\nfrom tracelab.results.check import check\n"
         "check(sys.argv[1], sys.argv[2], save=False, allow_ineffective=True)"
         ".verdicts.write_parquet(sys.argv[3])\n")


def episode(calls: int) -> dict[str, object]:
    """One run of `calls` tool calls (no results: a record stays under the 16 MiB line limit)."""
    steps: list[dict[str, object]] = []
    for i in range(calls):
        name = "lookup" if i % 2 == 0 else ("assign" if i % 2000 != 1999 else "other")
        if i == calls - 10:
            name = "delete"
        steps.append({"kind": "tool_call", "name": name})
    return {"episode_id": f"long-{calls}", "case_id": "long", "steps": steps}


def store_of(calls: int):  # type: ignore[no-untyped-def]
    """A store holding the one long run, built once per size."""
    WORK.mkdir(parents=True, exist_ok=True)
    store = WORK / f"sequence-{calls}.duckdb"
    if not store.exists():
        trace = WORK / f"sequence-{calls}.jsonl"
        trace.write_text(json.dumps(episode(calls)) + "\n")
        measure(tracelab("ingest", str(trace), "--store", str(fresh(store)), "-q"))
    return store


def run(calls: int = CALLS) -> dict[str, object]:
    suite = WORK / "sequence-suite.yaml"
    WORK.mkdir(parents=True, exist_ok=True)
    suite.write_text(SUITE)
    stores = {size: store_of(size) for size in (SMALL, calls)}
    runs = alternating({
        str(size): lambda store=store: measure(python(CHECK) + [str(store), str(suite),
                                                              str(WORK / "sequence.parquet")])
        for size, store in stores.items()
    }, REPEAT)
    small, large = fastest(runs[str(SMALL)]), fastest(runs[str(calls)])
    exponent = math.log(large.seconds / small.seconds) / math.log(calls / SMALL)
    return {"calls": calls, "check": large, "small_calls": SMALL, "small_check": small,
            "exponent": round(exponent, 2), "target_seconds": TARGET_SECONDS}


def summary(figures: dict) -> str:
    return (f"sequence rules: check of one run of {figures['calls']:,} calls in {figures['check'].seconds} s "
            f"({figures['small_check'].seconds} s at {figures['small_calls']:,}; exponent "
            f"{figures['exponent']}; target < {figures['target_seconds']:g} s)")


def row(figures: dict) -> str:
    return (f"| sequence rules (sequence_valid, trace_tool_sequence) on one long run "
            f"| 1 run of {figures['calls']:,} calls | {figures['check'].seconds} s "
            f"(peak RSS {figures['check'].peak_rss_mib} MiB) | {figures['small_check'].seconds} s at "
            f"{figures['small_calls']:,} calls | exponent {figures['exponent']} "
            f"| < {figures['target_seconds']:g} s, near-linear |")


if __name__ == "__main__":
    import sys

    print(summary(run(int(sys.argv[1]) if len(sys.argv) > 1 else CALLS)))
