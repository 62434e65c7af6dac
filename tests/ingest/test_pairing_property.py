"""Property: whatever the ids and names, stored pairs equal the sequential rule of trace-format §2.

SQL pairs the common case by a join and leaves the rest to `pair_steps`; this checks the
join path never disagrees with the rule (the reference below is written independently).
"""
from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracelab.store import open_store

ids = st.sampled_from(["", "c1", "c2", "c3", None])
names = st.sampled_from(["a", "b", "", None])
step = st.builds(lambda kind, name, cid: {"kind": kind, "name": name, "call_id": cid},
                 st.sampled_from(["tool_call", "tool_result"]), names, ids)


def reference(steps: list[dict]) -> list[tuple[int, int | None]]:
    unpaired: list[int] = []
    paired: dict[int, int] = {}
    for i, s in enumerate(steps):
        if s["kind"] == "tool_call":
            unpaired.append(i)
            continue
        if not unpaired:
            continue
        pick = next((c for c in unpaired if s["call_id"] and steps[c]["call_id"] == s["call_id"]), None)
        if pick is None and s["name"]:
            pick = next((c for c in unpaired if steps[c]["name"] == s["name"]), None)
        if pick is None:
            pick = unpaired[0]
        unpaired.remove(pick)
        paired[pick] = i
    return [(i, paired.get(i)) for i, s in enumerate(steps) if s["kind"] == "tool_call"]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(step, max_size=8), min_size=1, max_size=6))
def test_stored_pairs_follow_the_sequential_rule(tmp_path_factory, episodes):
    folder = tmp_path_factory.mktemp("pairs")
    path = folder / "p.jsonl"
    path.write_text("".join(json.dumps({"episode_id": f"e{n}", "steps": s}) + "\n" for n, s in enumerate(episodes)))
    with open_store(folder / "s.duckdb") as store:
        store.ingest([path])
        for n, steps in enumerate(episodes):
            got = store.sql("SELECT call_step_idx, result_step_idx FROM tool_calls WHERE episode_id = ? "
                            "ORDER BY call_index", [f"e{n}"]).rows()
            assert got == reference(steps)
