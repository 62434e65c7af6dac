"""LangSmith run exports and Langfuse trace exports: the mapping of runs and observations, the
hand-written samples, detection and quarantine."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracelab.formats import all_formats, langfuse, langsmith
from tracelab.formats.base import Quarantined
from tracelab.formats.source import Source
from tracelab.ingest.prepare import detect_format

SAMPLES = Path(__file__).resolve().parents[2] / "sample_traces"
RUNS = SAMPLES / "langsmith" / "support_runs.jsonl"
TRACES = SAMPLES / "langfuse" / "travel_desk.json"


def run(run_id, kind, parent=None, trace="t1", order="", **fields):
    return {"id": run_id, "name": fields.pop("name", run_id), "run_type": kind, "trace_id": trace,
            "parent_run_id": parent, "dotted_order": order or run_id, **fields}


def test_langsmith_tool_runs_are_calls_and_llm_runs_assistant_steps(write_jsonl) -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "refund", "arguments": "{\"id\": 7}"}}
    asked = {"id": "c2", "type": "function", "function": {"name": "notify", "arguments": "{}"}}
    runs = [
        run("a", "chain", name="agent", start_time="2026-11-18T10:00:00", status="error",
            error="boom\nRuntimeError: refund failed", inputs={"q": "Refund 7"}),
        run("a.1", "llm", "a", inputs={"messages": [{"role": "user", "content": "Refund 7"}]},
            outputs={"choices": [{"message": {"role": "assistant", "content": "On it.",
                                              "tool_calls": [call, asked]}}]},
            extra={"invocation_params": {"model": "gpt-4o"}}),
        run("a.2", "tool", "a", name="refund", inputs={"id": 7}, error="ToolException: declined",
            outputs={"tool_call_id": "c1"}),
    ]
    [(line, found)] = list(langsmith.episodes(Source(write_jsonl(runs))))
    assert line == 1
    assert [(s["kind"], s.get("name"), s.get("status")) for s in found["steps"]] == [
        ("user", None, None), ("assistant", None, None),
        ("tool_call", "notify", None),  # asked for, and no tool run recorded it
        ("tool_call", "refund", None), ("tool_result", "refund", "error"),
    ]
    assert found["steps"][3]["args"] == {"id": 7} and found["steps"][4]["error"] == "ToolException: declined"
    assert (found["episode_id"], found["agent"], found["model"], found["termination"], found["error"]) == (
        "t1", "agent", "gpt-4o", "error", "RuntimeError: refund failed")


def test_langsmith_nested_child_runs_read_like_flat_ones(write_jsonl) -> None:
    tree = run("r", "chain", name="agent", inputs={"input": "Hi"}, outputs={"output": "Hello"},
               child_runs=[run("r.t", "tool", name="clock", inputs={}, outputs={"output": "10:00"})])
    del tree["trace_id"], tree["child_runs"][0]["trace_id"]
    [(_, found)] = list(langsmith.episodes(Source(write_jsonl([tree]))))
    assert [(s["kind"], s.get("text")) for s in found["steps"]] == [
        ("user", "Hi"), ("assistant", "Hello"), ("tool_call", None), ("tool_result", "10:00")]
    assert found["episode_id"] == "r"


def test_langsmith_sample_and_its_bad_line(store) -> None:
    report = store.ingest([RUNS])
    assert (report.added, report.quarantined, report.files[0].format) == (2, 1, "langsmith")
    assert store.sql("SELECT line FROM quarantine").rows() == [(9,)]
    rows = store.sql("SELECT case_id, tool_name, call_id, status FROM tool_calls JOIN episodes "
                     "USING (episode_id) ORDER BY case_id, call_index").rows()
    assert rows == [("broken-item-refund", "issue_refund", "1f0b7a10-0000-7000-8000-0000000000b2", "error"),
                    ("broken-item-refund", "create_ticket", "call_tk1", "missing"),
                    ("late-order", "lookup_order", "call_lk1", "ok")]


def test_langfuse_observations_become_steps(write_jsonl) -> None:
    trace = {"id": "lf1", "name": "desk", "timestamp": "2026-11-18T08:00:00Z", "userId": "u1",
             "metadata": {"case_id": "c"}, "observations": [
                 {"id": "g1", "type": "GENERATION", "name": "plan", "startTime": "2026-11-18T08:00:01Z",
                  "model": "gpt-4o", "input": [{"role": "user", "content": "Book it"}],
                  "output": {"role": "assistant", "content": "Booking.", "tool_calls": [
                      {"id": "k1", "type": "function", "function": {"name": "book", "arguments": "{}"}}]}},
                 {"id": "s1", "type": "SPAN", "name": "book", "startTime": "2026-11-18T08:00:02Z",
                  "input": {"room": 1}, "output": None, "level": "ERROR", "statusMessage": "sold out"},
                 {"id": "e1", "type": "EVENT", "name": "audit", "startTime": "2026-11-18T08:00:03Z",
                  "input": {"ok": False}},
             ]}
    [(_, found)] = list(langfuse.episodes(Source(write_jsonl([trace]))))
    assert [(s["kind"], s.get("name"), s.get("status"), s.get("error")) for s in found["steps"]] == [
        ("user", None, None, None), ("assistant", None, None, None),
        ("tool_call", "book", None, None), ("tool_result", "book", "error", "sold out"),
        ("event", "audit", None, None),
    ]
    assert (found["case_id"], found["principal"], found["model"]) == ("c", {"user_id": "u1"}, "gpt-4o")


def test_langfuse_sample_and_traces_without_observations(store, write_jsonl) -> None:
    report = store.ingest([TRACES])
    assert (report.added, report.quarantined, report.files[0].format) == (2, 0, "langfuse")
    rows = store.sql("SELECT case_id, tool_name, status FROM tool_calls JOIN episodes "
                     "USING (episode_id) ORDER BY case_id, call_index").rows()
    assert rows == [("book-flight", "search_flights", "ok"), ("book-flight", "book_flight", "ok"),
                    ("cancel-hotel", "cancel_booking", "error")]
    ids_only = {"id": "x", "timestamp": "2026-11-18T08:00:00Z", "observations": ["o1", "o2"]}
    [bad] = list(langfuse.episodes(Source(write_jsonl([ids_only]))))
    assert isinstance(bad, Quarantined)
    assert bad.reason == "observations are ids only: export the trace with its observations"


def test_each_claims_its_sample_and_no_other_format_does() -> None:
    samples = sorted(p for p in SAMPLES.rglob("*") if p.is_file())
    for module, path in ((langsmith, RUNS), (langfuse, TRACES)):
        assert detect_format(Source(path)) is module
        assert [m.name for m in all_formats() if m.claims(Source(path))] == [module.name]
        assert [p for p in samples if module.claims(Source(p))] == [path]


# -- robustness ----------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8,
)
messages = st.lists(st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "system", "tool", "x"])},
    optional={"content": json_values, "tool_calls": st.one_of(json_values, st.lists(st.fixed_dictionaries(
        {"id": json_values, "name": json_values, "args": json_values}), max_size=2))}), max_size=3)
runs = st.lists(st.one_of(st.fixed_dictionaries(
    {"id": st.sampled_from(["a", "b", "c", "d"]), "run_type": st.sampled_from(["llm", "chain", "tool", "retriever"]),
     "trace_id": st.one_of(st.sampled_from(["t1", "t2", None]), json_values),
     "parent_run_id": st.one_of(st.sampled_from([None, "a", "b"]), json_values)},
    optional={"name": json_values, "dotted_order": json_values, "start_time": json_values,
              "inputs": st.one_of(json_values, st.fixed_dictionaries({"messages": messages})),
              "outputs": st.one_of(json_values, st.fixed_dictionaries({"generations": json_values}),
                                   st.fixed_dictionaries({"choices": st.lists(
                                       st.fixed_dictionaries({"message": st.one_of(json_values, messages)}),
                                       max_size=2)})),
              "error": json_values, "status": json_values, "extra": json_values, "tags": json_values,
              "child_runs": json_values, "reference_example_id": json_values}),
    json_values), min_size=1, max_size=6)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=runs)
def test_any_run_export_gives_episodes_or_quarantined_lines(adapt, records) -> None:
    items = adapt(langsmith, *map(json.dumps, records))
    lines = {item.line if isinstance(item, Quarantined) else item[0] for item in items}
    assert lines <= set(range(1, len(records) + 1))
    good = [i for i, r in enumerate(records, start=1) if isinstance(r, dict) and r.get("id") is not None]
    assert all(any(line <= g for line in lines) for g in good)  # every run went to some episode
    episodes = [item[1]["episode_id"] for item in items if not isinstance(item, Quarantined)]
    assert len(episodes) == len(set(episodes))


observations = st.lists(st.fixed_dictionaries(
    {"id": st.one_of(st.sampled_from(["o1", "o2"]), json_values),
     "type": st.sampled_from(["GENERATION", "SPAN", "EVENT", "TOOL", "X"])},
    optional={"name": json_values, "startTime": json_values, "endTime": json_values, "level": json_values,
              "input": st.one_of(json_values, messages), "output": st.one_of(json_values, messages),
              "statusMessage": json_values, "model": json_values, "metadata": json_values}), max_size=4)
traces = st.lists(st.one_of(st.fixed_dictionaries(
    {"id": st.sampled_from(["x", "y", ""]), "observations": st.one_of(observations, json_values)},
    optional={"name": json_values, "timestamp": json_values, "input": json_values, "output": json_values,
              "userId": json_values, "metadata": json_values, "tags": json_values}),
    json_values), min_size=1, max_size=4)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=traces)
def test_any_trace_export_gives_one_item_per_trace(adapt, records) -> None:
    items = adapt(langfuse, *map(json.dumps, records))
    assert [item.line if isinstance(item, Quarantined) else item[0] for item in items] == list(
        range(1, len(records) + 1))


def test_langfuse_bad_lines_are_quarantined_with_their_line(write_jsonl) -> None:
    trace = {"id": "a", "timestamp": "2026-11-18T08:00:00Z", "input": "Hi", "output": "Hello",
             "observations": []}
    source = Source(write_jsonl(
        [trace, "{cut", {**trace, "id": "b", "observations": [{"id": "o", "type": 7}]}, {**trace, "id": "c"},
         {**trace, "id": "d", "observations": [{"id": "o", "type": "LOG"}]}]))
    items = list(langfuse.episodes(source))
    assert [(i.line, i.reason[:13]) for i in items if isinstance(i, Quarantined)] == [
        (2, "invalid JSON:"), (3, "observations[")]
    assert items[2].reason == "observations[0]: type is not a string (a Langfuse observation type)"
    # a newer observation type is counted, not read (docs/formats.md: forward compatibility)
    assert [(line, ep["episode_id"], ep["output"]) for line, ep in
            (i for i in items if not isinstance(i, Quarantined))] == [
        (1, "a", "Hello"), (4, "c", "Hello"), (5, "d", "Hello")]
    assert source.unread == {"observation:LOG": 1}


def test_ids_that_are_not_strings_quarantine_or_pair_nothing(write_jsonl) -> None:
    """Found by the adapter fuzz test: an observation id that is a list crashed the lookup of
    recorded calls; a requested call's list id is now simply no id."""
    trace = {"id": "t", "timestamp": "2026-11-18T08:00:00Z", "observations": [
        {"id": [], "type": "TOOL", "name": "search", "input": {}}]}
    odd_type = {**trace, "observations": [{"id": "o", "type": ["TOOL"]}]}
    bad, typed = list(langfuse.episodes(Source(write_jsonl([trace, odd_type]))))
    assert isinstance(bad, Quarantined) and bad.reason == "observations[0].id is a list, not a string"
    assert isinstance(typed, Quarantined) and typed.line == 2
    child = run("r", "chain", child_runs=[{"id": ["x"], "run_type": "tool"}])
    [nested] = list(langsmith.episodes(Source(write_jsonl([child], "nested.jsonl"))))
    assert isinstance(nested, Quarantined) and nested.reason == "the run has no `id` (a string or a number)"
    asked = {"role": "assistant", "content": "", "tool_calls": [{"id": [1], "name": "search", "args": {}}]}
    runs = [run("a", "chain", name="agent"), run("a.1", "llm", "a", outputs={"message": asked}),
            run("a.2", "tool", "a", name="search", inputs={})]
    [(_, found)] = list(langsmith.episodes(Source(write_jsonl(runs, "runs.jsonl"))))
    assert [(s["kind"], s.get("name")) for s in found["steps"]] == [
        ("tool_call", "search"), ("tool_result", "search")]  # the request is the run's call


@pytest.mark.parametrize("calls", [True, 3, "call", {"name": "x"}])
def test_tool_calls_that_are_not_a_list_hold_no_call(adapt, calls) -> None:
    # found by the property test above: `tool_calls: true` crashed the run's adapter
    run = {"id": "r1", "run_type": "llm", "inputs": {"messages": [
        {"role": "assistant", "content": "hi", "tool_calls": calls,
         "additional_kwargs": {"tool_calls": calls}}]}}
    items = adapt(langsmith, json.dumps(run))
    assert len(items) == 1 and not isinstance(items[0], Quarantined)
    assert [s["kind"] for s in items[0][1]["steps"]] == ["assistant"]
