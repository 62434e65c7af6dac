"""ATIF trajectories (Harbor): the step mapping, episode fields, and ingest of the samples."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tracelab.formats import atif
from tracelab.formats.source import Source
from tracelab.formats.values import RecordError
from tracelab.ingest.prepare import detect_format

SAMPLES = Path(__file__).resolve().parents[2] / "sample_traces" / "atif"
AGENT = {"name": "terminus", "version": "2.0", "model_name": "claude"}


def trajectory(*steps: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {"schema_version": "ATIF-v1.5", "session_id": "sess-1", "agent": AGENT,
            "steps": list(steps), **fields}


def one(adapt, record: dict[str, Any]) -> dict[str, Any]:
    [(line, episode)] = adapt(atif, record)
    assert line == 1
    return episode


def test_agent_steps_become_turns_calls_and_results(adapt) -> None:
    ep = one(adapt, trajectory(
        {"step_id": 1, "source": "user", "message": "Fix it.", "timestamp": "2026-01-01T00:00:00Z"},
        {"step_id": 2, "source": "agent", "message": "Reading.", "reasoning_content": "think",
         "timestamp": "2026-01-01T00:00:02Z",
         "tool_calls": [{"tool_call_id": "t1", "function_name": "read", "arguments": {"p": "a"}},
                        {"tool_call_id": "t2", "function_name": "run", "arguments": {}}],
         "observation": {"results": [
             {"source_call_id": "t2", "content": "denied", "is_error": True},
             {"source_call_id": "t1", "content": [{"type": "text", "text": "abc"},
                                                  {"type": "image", "source": "x.png"}]}]},
         "metrics": {"prompt_tokens": 10}},
        {"step_id": 3, "source": "agent", "message": "Fixed."},
    ))
    assert ep["steps"] == [
        {"kind": "user", "text": "Fix it.", "meta": {"step_id": 1},
         "ts": "2026-01-01T00:00:00Z"},
        {"kind": "assistant", "text": "Reading.",
         "meta": {"step_id": 2, "reasoning_content": "think", "metrics": {"prompt_tokens": 10}},
         "ts": "2026-01-01T00:00:02Z"},
        {"kind": "tool_call", "name": "read", "call_id": "t1", "args": {"p": "a"},
         "ts": "2026-01-01T00:00:02Z"},
        {"kind": "tool_call", "name": "run", "call_id": "t2", "args": {},
         "ts": "2026-01-01T00:00:02Z"},
        {"kind": "tool_result", "call_id": "t2", "name": "run", "text": "denied",
         "status": "error", "ts": "2026-01-01T00:00:02Z"},
        {"kind": "tool_result", "call_id": "t1", "name": "read", "text": "abc", "status": "ok",
         "meta": {"parts": [{"type": "image", "source": "x.png"}]},
         "ts": "2026-01-01T00:00:02Z"},
        {"kind": "assistant", "text": "Fixed.", "meta": {"step_id": 3}},
    ]
    assert (ep["input"], ep["output"]) == ("Fix it.", "Fixed.")
    assert (ep["started_at"], ep["ended_at"]) == ("2026-01-01T00:00:00Z", "2026-01-01T00:00:02Z")


def test_observations_without_a_call_id(adapt) -> None:
    ep = one(adapt, trajectory(
        {"step_id": 1, "source": "system", "message": "compacted",
         "observation": {"results": [{"content": "summary"}]}},
        {"step_id": 2, "source": "agent", "message": "",
         "observation": {"results": [{"content": "$ ls\nREADME"}]}},
    ))
    assert ep["steps"][1:] == [
        {"kind": "event", "name": "observation", "data": {"content": "summary"}},
        {"kind": "tool_result", "text": "$ ls\nREADME", "status": "ok"},
    ]


def test_episode_fields(adapt) -> None:
    ep = one(adapt, trajectory(
        {"step_id": 1, "source": "agent", "message": "hi", "model_name": "step-model"},
        schema_version="ATIF-v1.7", trajectory_id="traj-9", prompt_id="case-3",
        status="FAILED", total_reward=0.5, notes="n",
        agent={"name": "a", "version": "1", "extra": {"k": "v"}},
        extra={"tags": ["x"], "case_id": "ignored-for-prompt-id"}))
    assert {k: ep.get(k) for k in ("episode_id", "agent", "agent_version", "model", "case_id",
                                   "termination", "reward", "tags")} == {
        "episode_id": "traj-9", "agent": "a", "agent_version": "1", "model": "step-model",
        "case_id": "case-3", "termination": "error", "reward": 0.5, "tags": ["x"]}
    assert ep["meta"] == {"schema_version": "ATIF-v1.7", "session_id": "sess-1", "notes": "n",
                          "extra": {"tags": ["x"], "case_id": "ignored-for-prompt-id"},
                          "agent": {"extra": {"k": "v"}}}
    bare = one(adapt, trajectory(session_id=None, status="COMPLETED"))
    assert bare["episode_id"].endswith(":1")
    assert bare["termination"] == "completed"


def test_tool_definitions_flat_or_wrapped_and_absent_means_unknown(adapt) -> None:
    wrapped = {"type": "function", "function": {"name": "read", "description": "Read.",
                                                "parameters": {"type": "object"}}}
    flat = {"name": "write", "x-effect": "write"}
    ep = one(adapt, trajectory(agent={**AGENT, "tool_definitions": [wrapped, flat]}))
    assert ep["tools"] == [
        {"name": "read", "description": "Read.", "parameters": {"type": "object"}},
        {"name": "write", "effect": "write"},
    ]
    assert "tools" not in one(adapt, trajectory())
    assert one(adapt, trajectory(agent={**AGENT, "tool_definitions": []}))["tools"] == []


def test_malformed_trajectories_are_quarantined(adapt) -> None:
    items = adapt(atif, trajectory({"source": "tool", "message": "x"}),
                  trajectory(steps="none"), '{"schema_version": "ATIF-v1.2", "steps": [',
                  trajectory({"source": "agent", "message": "", "tool_calls": [7]}))
    assert [(q.line, q.reason) for q in items[:2]] == [
        (1, "steps[0]: source 'tool' is not system, user or agent"),
        (2, "steps is a string, not a list"),
    ]
    assert items[2].line == 3 and items[2].reason.startswith("invalid JSON")
    assert (items[3].line, items[3].reason) == (4, "steps[0].tool_calls[0] is a number, not an object")


def test_a_json_array_holds_one_trajectory_per_element(tmp_path: Path) -> None:
    path = tmp_path / "two.json"
    path.write_text(json.dumps([trajectory(session_id="a"), trajectory(session_id="b")]))
    assert [(line, ep["episode_id"]) for line, ep in atif.episodes(Source(path))] == [
        (1, "a"), (2, "b")]


# -- the samples ----------------------------------------------------------------------------


def test_samples_ingest_with_paired_calls_statuses_definitions(store) -> None:
    report = store.ingest([SAMPLES])
    assert (report.added, report.quarantined) == (3, 2)
    calls = store.sql(
        "SELECT episode_id, call_id, tool_name, status, result_step_idx - call_step_idx"
        " FROM tool_calls ORDER BY episode_id, call_index").rows()
    assert calls == [
        ("7d1c2e9a-4b1f-4c55-9a0e-3f2b8d6c1a01", "toolu_01", "read_file", "ok", 2),
        ("7d1c2e9a-4b1f-4c55-9a0e-3f2b8d6c1a01", "toolu_02", "bash", "error", 2),
        ("7d1c2e9a-4b1f-4c55-9a0e-3f2b8d6c1a01", "toolu_03", "write_file", "ok", 1),
        ("run-b-0001", "call_b1", "bash_command", "ok", 1),
    ]
    episodes = store.sql(
        "SELECT episode_id, case_id, termination, reward, tools_declared,"
        " (SELECT count(*) FROM tool_definitions d WHERE d.episode_id = e.episode_id)"
        " FROM episodes e ORDER BY episode_id").rows()
    assert episodes == [
        ("7d1c2e9a-4b1f-4c55-9a0e-3f2b8d6c1a01", "fix-service-port", None, 1.0, True, 3),
        ("run-b-0001", None, None, None, False, 0),
        ("run-b-0002/seg-1", "rotate-api-key", "error", 0.0, True, 0),
    ]
    quarantine = store.sql("SELECT line, reason FROM quarantine ORDER BY line").rows()
    assert quarantine[0][0] == 3 and quarantine[0][1].startswith("invalid JSON")
    assert quarantine[1] == (4, "steps[0]: source 'tool' is not system, user or agent")
    leaked = store.sql("SELECT output FROM episodes WHERE case_id = 'fix-service-port'").item()
    assert "S3cr3t-DB-pass" in leaked


def test_auto_detection_picks_atif() -> None:
    assert detect_format(Source(SAMPLES / "fix_service_config.json")).name == "atif"
    assert detect_format(Source(SAMPLES / "batch.jsonl")).name == "atif"


# -- robustness -----------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                max_size=3),
    max_leaves=8,
)
STEP_KEYS = ("message", "tool_calls", "observation", "timestamp", "model_name")
steps = st.lists(st.fixed_dictionaries(
    {"source": st.sampled_from(["system", "user", "agent"])},
    optional={key: json_values for key in STEP_KEYS}), max_size=4)


@settings(max_examples=150, deadline=None)
@given(steps=steps, agent=json_values, extra=json_values)
def test_any_trajectory_gives_an_episode_or_a_record_error(steps, agent, extra) -> None:
    record = trajectory(*steps, agent=agent, extra=extra, status=extra, total_reward=extra)
    try:
        ep = atif.to_episode(record, Source("never-read.json"), 1)
    except RecordError:
        return
    assert all(isinstance(step, dict) and "kind" in step for step in ep["steps"])
