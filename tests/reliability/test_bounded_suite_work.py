"""Bounded memory and time: a YAML alias bomb is refused quickly, and sequence rules stay
near-linear in the calls of a run (issue 14, items 4 and 5).
"""
from __future__ import annotations

import resource
import textwrap
import time

from tests.conftest import episode
from tests.reliability.support import ingested, one_line_error, run_cli, suite_file, tracelab


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))


def test_a_yaml_alias_bomb_is_refused_quickly(tmp_path):
    levels = "\n".join(f"            {chr(98 + i)}: &{chr(98 + i)} {{anyOf: [{', '.join([f'*{chr(97 + i)}'] * 9)}]}}"
                       for i in range(8))
    suite = suite_file(tmp_path, f"""
        - type: args_valid
          tool: t
          schema:
            type: object
            properties:
              a: &a {{enum: [1, 2, 3, 4, 5, 6, 7, 8, 9]}}
{textwrap.indent(levels, "  ")}
    """)
    assert len(suite.read_bytes()) < 1500
    start = time.monotonic()
    done = tracelab("lint", str(suite), cwd=tmp_path, timeout=120, preexec_fn=_limit_memory)
    assert (done.returncode, done.stdout) == (2, "") and one_line_error(done.stderr), done.stderr
    assert "aliases expand to more than 1,000,000 values" in done.stderr
    assert time.monotonic() - start < 30


def test_sequence_rules_are_near_linear_in_the_calls_of_a_run(tmp_path):
    def run(calls: int) -> dict:
        names = ["lookup" if i % 2 == 0 else "assign" for i in range(calls)]
        names[-1] = "lookup"  # so the lookup before it is never answered: `after` fails near the end
        return episode(f"long-{calls}", *({"kind": "tool_call", "name": n} for n in names), case_id="c")

    suite = suite_file(tmp_path, """
        - type: sequence_valid
          rules:
            - {type: after, trigger: lookup, then: assign, within: 1}
            - {type: never_after, trigger: assign, forbidden: delete}
            - {type: sequence, tools: [lookup, assign, lookup]}
        - {type: trace_tool_sequence, sequence: [lookup, assign], allow_other_tools: true}
    """)
    seconds = {}
    for calls in (20_000, 100_000):
        store = ingested(tmp_path, run(calls), name=f"s{calls}.duckdb")
        runs = []
        for _ in range(2):  # the faster of two: the first may pay for imports and a cold cache
            start = time.perf_counter()
            code, out, _ = run_cli("check", str(suite), "--store", str(store), "--no-save", "--allow-ineffective")
            runs.append(time.perf_counter() - start)
            assert code == 1 and f'"lookup" at call_index {calls - 2} is not followed by "assign"' in out
        seconds[calls] = min(runs)
    # 5x the calls: near-linear is at most 5x the time (about 2.5x, with the fixed costs); the
    # NOT EXISTS over every later call (before) took 11x: 2.7 s, then 30 s at 100,000 calls
    assert seconds[100_000] < 6 * seconds[20_000], seconds


