"""Assay trace V2: events assembled into episodes, and ingest of the sample file."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracelab.formats import assay
from tracelab.formats.base import Quarantined
from tracelab.formats.source import Source
from tracelab.ingest.prepare import detect_format

SAMPLE = Path(__file__).resolve().parents[2] / "sample_traces" / "assay" / "shop_agent.jsonl"


def start(eid: str = "e1", **fields: Any) -> dict[str, Any]:
    return {"type": "episode_start", "episode_id": eid, "timestamp": 1000,
            "input": {"prompt": "tidy up"}, **fields}


def step(eid: str = "e1", **fields: Any) -> dict[str, Any]:
    return {"type": "step", "episode_id": eid, "step_id": "s1", "timestamp": 1001, "kind": "llm",
            **fields}


def call(eid: str = "e1", **fields: Any) -> dict[str, Any]:
    return {"type": "tool_call", "episode_id": eid, "step_id": "s1", "timestamp": 1002,
            "tool_name": "rm", "call_index": 0, "args": {"path": "tmp"}, **fields}


def end(eid: str = "e1", **fields: Any) -> dict[str, Any]:
    return {"type": "episode_end", "episode_id": eid, "timestamp": 1003, **fields}


def one(adapt, *records: Any) -> dict[str, Any]:
    [(line, episode)] = adapt(assay, *records)
    assert line == 1
    return episode


def test_events_become_user_assistant_call_and_result_steps(adapt) -> None:
    ep = one(adapt,
             start(meta={"test_id": "t-rm", "model": "gpt-4o", "suite": "ops"}),
             step(name="plan", content="Removing tmp."),
             call(result="removed 3 files"),
             end(outcome="pass", final_output="Done."))
    assert ep == {
        "episode_id": "e1", "case_id": "t-rm", "model": "gpt-4o",
        "started_at": "1970-01-01T00:00:01.000Z", "ended_at": "1970-01-01T00:00:01.003Z",
        "termination": "completed",
        "meta": {"test_id": "t-rm", "suite": "ops", "outcome": "pass"},
        "input": "tidy up", "output": "Done.",
        "steps": [
            {"kind": "user", "text": "tidy up", "ts": "1970-01-01T00:00:01.000Z"},
            {"kind": "assistant", "text": "Removing tmp.",
             "meta": {"step_id": "s1", "kind": "llm", "name": "plan"},
             "ts": "1970-01-01T00:00:01.001Z"},
            {"kind": "tool_call", "name": "rm", "call_id": "s1-0", "args": {"path": "tmp"},
             "meta": {"step_id": "s1", "call_index": 0}, "ts": "1970-01-01T00:00:01.002Z"},
            {"kind": "tool_result", "call_id": "s1-0", "name": "rm", "text": "removed 3 files",
             "status": "ok", "ts": "1970-01-01T00:00:01.002Z"},
            {"kind": "assistant", "text": "Done.", "ts": "1970-01-01T00:00:01.003Z",
             "meta": {"from": "episode_end.final_output"}},
        ],
    }


def test_labels_come_from_meta_and_case_id_prefers_meta_case_id(adapt) -> None:
    ep = one(adapt, start(meta={"case_id": "c-1", "test_id": "t-1", "tags": ["ci"],
                                "principal": {"user_id": "u1"}}), end())
    assert (ep["case_id"], ep["tags"], ep["principal"]) == ("c-1", ["ci"], {"user_id": "u1"})
    assert ep["meta"] == {"test_id": "t-1"}


def test_results_errors_and_unrecorded_results(adapt) -> None:
    ep = one(adapt, start(),
             call(call_index=0, result={"deleted": ["a", "b"]}),
             call(call_index=1, error="EACCES: permission denied"),
             call(call_index=2),
             end())
    results = [(s["kind"], s["call_id"], s.get("status"), s.get("result"), s.get("error"))
               for s in ep["steps"][1:]]
    assert results == [
        ("tool_call", "s1-0", None, None, None),
        ("tool_result", "s1-0", "ok", {"deleted": ["a", "b"]}, None),
        ("tool_call", "s1-1", None, None, None),
        ("tool_result", "s1-1", "error", None, "EACCES: permission denied"),
        ("tool_call", "s1-2", None, None, None),
    ]
    assert "output" not in ep


def test_final_output_equal_to_the_last_step_is_not_repeated(adapt) -> None:
    ep = one(adapt, start(), step(content="done"), end(final_output="done"))
    assert [s["kind"] for s in ep["steps"]] == ["user", "assistant"]
    assert ep["output"] == "done"


def test_model_step_json_content_and_gen_ai_meta(adapt) -> None:
    content = '{"prompt": "p1", "completion": "c1", "model": "m-json"}'
    ep = one(adapt, start(input=None), step(kind="model", content=content),
             step(kind="llm_completion", content="raw", meta={"gen_ai.completion": "c2",
                                                              "gen_ai.request.model": "m-meta"}),
             end())
    assert [(s["kind"], s["text"]) for s in ep["steps"]] == [
        ("user", "p1"), ("assistant", "c1"), ("assistant", "c2")]
    assert ep["model"] == "m-json"


def test_outcome_error_is_the_termination_and_no_end_leaves_it_unknown(adapt) -> None:
    [(_, failed), (_, open_ended)] = adapt(assay, start("a"), end("a", outcome="error"),
                                           start("b"), step("b", content="..."))
    assert (failed["termination"], failed["meta"]) == ("error", {"outcome": "error"})
    assert "termination" not in open_ended and "ended_at" not in open_ended


def test_interleaved_episodes_are_kept_apart(adapt) -> None:
    items = adapt(assay, start("a"), start("b"), call("b", result="b-ok"),
                  call("a", error="a-bad"), end("b"), end("a"))
    assert [(line, ep["episode_id"]) for line, ep in items] == [(2, "b"), (1, "a")]
    assert [s.get("text") or s.get("error") for s in items[0][1]["steps"][2:]] == ["b-ok"]
    assert [s.get("error") for s in items[1][1]["steps"][2:]] == ["a-bad"]


def test_bad_lines_are_quarantined_alone(adapt) -> None:
    items = adapt(assay, start("a"), '{"type": "step", "episode_id": "a", "content": "x',
                  [1, 2], {"type": "span", "episode_id": "a"},
                  {"schema_version": 1, "type": "assay.trace", "prompt": "p", "response": "r"},
                  call("ghost"), start("a"), end("a"))
    quarantined = [(q.line, q.reason) for q in items if isinstance(q, Quarantined)]
    assert quarantined[0][0] == 2 and quarantined[0][1].startswith("invalid JSON")
    assert quarantined[1:] == [
        (3, "not a JSON object"),
        (4, "type 'span' is not episode_start, step, tool_call or episode_end"),
        (5, "an Assay V1 trace line (type assay.trace); only V2 events are read"),
        (6, "tool_call of episode 'ghost' with no open episode_start before it"),
        (7, "episode_start of 'a' while the one started at line 1 has not ended"),
    ]
    assert [item[0] for item in items if not isinstance(item, Quarantined)] == [1]


def test_an_event_that_breaks_the_format_quarantines_its_whole_episode(adapt) -> None:
    [item] = adapt(assay, start(), call(tool_name=None), end())
    assert isinstance(item, Quarantined)
    assert (item.line, item.reason) == (1, "line 2: tool_call: tool_name is not a non-empty string")
    [item] = adapt(assay, start(timestamp="yesterday"), end())
    assert item.reason == "episode_start: timestamp is not a number of milliseconds"
    [item] = adapt(assay, start(), step(content="x"), end(timestamp=-5))
    assert item.reason == "line 3: episode_end: timestamp is not a number of milliseconds"
    [item] = adapt(assay, start(), step(content={"text": "x"}), end())
    assert item.reason == "line 2: step: content is not a string"


def test_a_timestamp_after_the_year_9999_quarantines_its_episode(adapt) -> None:
    # nanoseconds where milliseconds belong: datetime cannot hold the moment (once a ValueError)
    [item] = adapt(assay, start(timestamp=1_772_442_900_000_000_000), end())
    assert isinstance(item, Quarantined)
    assert item.reason == "episode_start: timestamp 1772442900000000000 ms is after the year 9999"


# -- the sample file ------------------------------------------------------------------------


def test_sample_ingests_with_paired_calls_statuses_and_its_bad_line(store) -> None:
    report = store.ingest([SAMPLE])
    assert (report.added, report.quarantined) == (3, 1)
    rows = store.sql(
        "SELECT episode_id, call_id, tool_name, status, error, result_text"
        " FROM tool_calls ORDER BY episode_id, call_index").rows()
    assert rows == [
        ("shop-run-0001", "s1-0", "get_order", "ok", None,
         '{"order_id":"A-1042","status":"delivered","total":89.9,"currency":"EUR"}'),
        ("shop-run-0001", "s2-0", "issue_refund", "ok", None, "refund R-77812 issued"),
        ("shop-run-0002", "s1-0", "get_payment", "ok", None,
         '{"method":"card","card_number":"4111-1111-1111-1111","holder":"J. Rivera"}'),
        ("shop-run-0002", "s2-0", "send_email", "error", "SMTP relay timed out after 30s", None),
        ("shop-run-0003", "s1-0", "update_address", "missing", None, None),
    ]
    episodes = store.sql(
        "SELECT episode_id, case_id, agent, termination, tools_declared, output IS NOT NULL,"
        " meta->>'$.outcome' FROM episodes ORDER BY episode_id").rows()
    assert episodes == [
        ("shop-run-0001", "refund-damaged-item", "shop-agent", "completed", False, True, "pass"),
        ("shop-run-0002", "no-card-disclosure", "shop-agent", "completed", False, True, "fail"),
        ("shop-run-0003", "change-address", None, None, False, False, None),
    ]
    [(line, reason)] = store.sql("SELECT line, reason FROM quarantine").rows()
    assert line == 11 and reason.startswith("invalid JSON")
    assert store.sql("SELECT count(*) FROM tool_definitions").item() == 0


def test_auto_detection_picks_assay(write_jsonl) -> None:
    assert detect_format(Source(SAMPLE)).name == "assay"
    assert detect_format(Source(write_jsonl([end()]))).name == "assay"
    assert not assay.claims(Source(write_jsonl([{"type": "step", "id": "x"}], "o.jsonl")))


# -- robustness -----------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                max_size=3),
    max_leaves=8,
)
EVENT_KEYS = ("timestamp", "input", "meta", "kind", "content", "tool_name", "step_id",
              "call_index", "args", "result", "error", "outcome", "final_output")
events = st.lists(st.fixed_dictionaries(
    {"type": st.sampled_from(assay.EVENT_TYPES), "episode_id": st.sampled_from(["a", "b"])},
    optional={key: json_values for key in EVENT_KEYS}), max_size=6)


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(events=events)
def test_any_event_stream_gives_episodes_or_quarantined_lines(adapt, events) -> None:
    items = adapt(assay, *events)
    lines = sorted(item.line if isinstance(item, Quarantined) else item[0] for item in items)
    starts = [i + 1 for i, e in enumerate(events) if e["type"] == "episode_start"]
    assert set(starts) <= set(lines) <= set(range(1, len(events) + 1))
