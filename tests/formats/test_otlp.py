"""OTLP JSON with GenAI conventions: the mapping of formats.md, and ingest of the sample file."""
from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import orjson
import pytest

from tests.formats.span_builders import (
    ROOT,
    TRACE,
    bare,
    calls,
    chat,
    event,
    record,
    responds,
    said,
    span,
    tool,
)
from tracelab.formats import openinference, otlp
from tracelab.formats.base import Quarantined
from tracelab.formats.source import Source
from tracelab.generate import iter_episodes
from tracelab.generate.emit_otlp import to_otlp
from tracelab.ingest.prepare import detect_format
from tracelab.store import open_store

SAMPLE = Path(__file__).resolve().parents[2] / "sample_traces" / "otlp" / "genai_agents.jsonl"

S = said("system", "Be brief.")
U = said("user", "Refund order 8812")
A1 = calls(("c1", "get_order", {"id": "8812"}), text="Looking it up.")
T1 = responds("c1", "delivered")
A2 = said("assistant", "Refunded.")
AGENT = span(ROOT, 0, 310, {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "refunds",
                            "gen_ai.agent.version": "1.2"}, parent=None, name="invoke_agent refunds")

REFUND_STEPS = [
    {"kind": "system", "text": "Be brief."},
    {"kind": "user", "text": "Refund order 8812"},
    {"kind": "assistant", "text": "Looking it up."},
    {"kind": "tool_call", "name": "get_order", "call_id": "c1", "args": '{"id": "8812"}'},
    {"kind": "tool_result", "call_id": "c1", "name": "get_order", "text": "delivered",
     "status": "ok"},
    {"kind": "assistant", "text": "Refunded."},
]


def refund_record() -> dict:
    return record(
        chat("a000000000000001", 10, 100, [S, U], [A1]),
        tool("a000000000000002", 110, 150, "get_order", "c1", '{"id": "8812"}', "delivered"),
        chat("a000000000000003", 160, 300, [S, U, A1, T1], [A2]),
        AGENT,
        resource={"tracelab.case_id": "refund-1", "service.name": "svc"},
    )


def episodes(adapt, *records) -> list:
    return adapt(otlp, *records)


def one(adapt, *records) -> dict:
    [(line, episode)] = episodes(adapt, *records)
    assert line == 1
    return episode


# -- mapping -----------------------------------------------------------------------------------


def test_newer_conventions_map_to_the_native_episode(adapt) -> None:
    episode = one(adapt, refund_record())
    assert {**episode, "steps": bare(episode["steps"])} == {
        "episode_id": TRACE,
        "case_id": "refund-1",
        "agent": "refunds",
        "agent_version": "1.2",
        "model": "gpt-4o",
        "started_at": "2026-03-02T09:15:00.000000Z",
        "ended_at": "2026-03-02T09:15:00.310000Z",
        "meta": {"service.name": "svc"},
        "input": "Refund order 8812",
        "output": "Refunded.",
        "steps": REFUND_STEPS,
    }


def test_steps_carry_their_span_times_and_ids(adapt) -> None:
    steps = one(adapt, refund_record())["steps"]
    assert [(s["kind"], s["ts"], s["meta"]["span_id"]) for s in steps] == [
        ("system", "2026-03-02T09:15:00.010000Z", "a000000000000001"),
        ("user", "2026-03-02T09:15:00.010000Z", "a000000000000001"),
        ("assistant", "2026-03-02T09:15:00.100000Z", "a000000000000001"),  # output: at the span end
        ("tool_call", "2026-03-02T09:15:00.110000Z", "a000000000000002"),
        ("tool_result", "2026-03-02T09:15:00.150000Z", "a000000000000002"),
        ("assistant", "2026-03-02T09:15:00.300000Z", "a000000000000003"),
    ]
    assert steps[4]["duration_ms"] == 40.0


def test_older_span_events_give_the_same_steps(adapt) -> None:
    first = chat("a000000000000001", 10, 100, None, None, events=[
        event("gen_ai.system.message", {"content": "Be brief."}),
        # a body given as the event's own attributes, without gen_ai.event.content
        {"name": "gen_ai.user.message", "attributes": [
            {"key": "content", "value": {"stringValue": "Refund order 8812"}}]},
        event("gen_ai.choice", {"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": "Looking it up.", "tool_calls": [
                {"id": "c1", "type": "function",
                 "function": {"name": "get_order", "arguments": '{"id": "8812"}'}}]}}),
    ])
    second = chat("a000000000000003", 160, 300, None, None, events=[
        event("gen_ai.system.message", {"content": "Be brief."}),
        event("gen_ai.user.message", {"content": "Refund order 8812"}),
        event("gen_ai.assistant.message", {"content": "Looking it up.", "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "get_order", "arguments": '{"id": "8812"}'}}]}),
        event("gen_ai.tool.message", {"content": "delivered", "id": "c1"}),
        event("gen_ai.choice", {"index": 0, "finish_reason": "stop",
                                "message": {"content": "Refunded."}}),
    ])
    executed = tool("a000000000000002", 110, 150, "get_order", "c1", '{"id": "8812"}', "delivered")
    episode = one(adapt, record(first, executed, second, AGENT))
    assert bare(episode["steps"]) == REFUND_STEPS


def test_system_instructions_give_a_system_step_once(adapt) -> None:
    instructions = {"gen_ai.system_instructions": json.dumps([{"type": "text", "content": "Be kind."}])}
    episode = one(adapt, record(
        chat("a000000000000001", 10, 20, [U], [said("assistant", "Which order?")],
             attributes=instructions),
        chat("a000000000000002", 30, 40, [U, said("assistant", "Which order?"), said("user", "8812")],
             [said("assistant", "Done.")], attributes=instructions),
    ))
    assert bare(episode["steps"]) == [
        {"kind": "system", "text": "Be kind."},
        {"kind": "user", "text": "Refund order 8812"},
        {"kind": "assistant", "text": "Which order?"},
        {"kind": "user", "text": "8812"},
        {"kind": "assistant", "text": "Done."},
    ]


def test_later_spans_add_only_the_inputs_beyond_the_previous_input_and_output(adapt) -> None:
    ask = said("assistant", "Which order?")
    order = said("user", "Order 8812")
    ok = said("assistant", "Refunded.")
    thanks = said("user", "Thanks")
    episode = one(adapt, record(
        chat("a000000000000001", 10, 20, [S, U], [ask]),
        chat("a000000000000002", 30, 40, [S, U, ask, order], [ok]),
        chat("a000000000000003", 50, 60, [S, U, ask, order, ok, thanks], [said("assistant", "Bye.")]),
        # a truncated history (shorter than 6 + 1 messages) adds no input step
        chat("a000000000000004", 70, 80, [thanks], [said("assistant", "Still here.")]),
    ))
    assert [(s["kind"], s["text"]) for s in episode["steps"]] == [
        ("system", "Be brief."),
        ("user", "Refund order 8812"),
        ("assistant", "Which order?"),
        ("user", "Order 8812"),
        ("assistant", "Refunded."),
        ("user", "Thanks"),
        ("assistant", "Bye."),
        ("assistant", "Still here."),
    ]


def test_execute_tool_span_is_the_record_of_its_call_id(adapt) -> None:
    asked = calls(("c1", "lookup", {"q": 1}), ("c2", "notify", {"to": "ops"}))
    episode = one(adapt, record(
        chat("a000000000000001", 10, 100, [U], [asked]),
        tool("a000000000000002", 110, 150, "lookup", "c1", '{"q": 1}', "found"),
        chat("a000000000000003", 160, 300, [U, asked, responds("c1", "found"), responds("c2", "sent")],
             [said("assistant", "Done.")]),
    ))
    # c1 comes from its span (call and result); c2 has no span, so its parts are the record
    assert bare(episode["steps"]) == [
        {"kind": "user", "text": "Refund order 8812"},
        {"kind": "tool_call", "name": "notify", "call_id": "c2", "args": {"to": "ops"}},
        {"kind": "tool_call", "name": "lookup", "call_id": "c1", "args": '{"q": 1}'},
        {"kind": "tool_result", "call_id": "c1", "name": "lookup", "text": "found", "status": "ok"},
        {"kind": "tool_result", "call_id": "c2", "text": "sent", "status": "ok"},
        {"kind": "assistant", "text": "Done."},
    ]


def test_a_tool_call_only_message_yields_no_assistant_step(adapt) -> None:
    episode = one(adapt, record(chat("a000000000000001", 10, 20, [U], [calls(("c9", "ping", {}))])))
    assert bare(episode["steps"]) == [
        {"kind": "user", "text": "Refund order 8812"},
        {"kind": "tool_call", "name": "ping", "call_id": "c9", "args": {}},
    ]
    assert "output" not in episode  # the run ended on a tool call


@pytest.mark.parametrize(("status", "extra", "expected"), [
    ({"code": 2, "message": "gateway timeout"}, {"error.type": "TimeoutError"},
     {"status": "error", "error": "gateway timeout"}),
    (None, {"error.type": "EventNotFound"}, {"status": "error", "error": "EventNotFound"}),
    ({"code": "STATUS_CODE_ERROR"}, {}, {"status": "error"}),
    ({"code": 1}, {}, {"status": "ok"}),
    (None, {}, {"status": "ok"}),
])
def test_tool_span_status(adapt, status, extra, expected) -> None:
    episode = one(adapt, record(tool("a000000000000002", 110, 150, "refund", "c1", "{}",
                                     status=status, attributes=extra)))
    assert bare(episode["steps"])[1] == {"kind": "tool_result", "call_id": "c1", "name": "refund",
                                         **expected}
    assert "output" not in episode  # the run ended on a tool result


def test_episode_error_is_the_root_span_status_message(adapt) -> None:
    failed_root = span(ROOT, 0, 500, {"gen_ai.operation.name": "invoke_agent"}, parent=None,
                       status={"code": 2, "message": "step budget exhausted"})
    failed_child = tool("a000000000000002", 110, 150, "refund", "c1", "{}",
                        status={"code": 2, "message": "timeout"})
    assert one(adapt, record(failed_child, failed_root))["error"] == "step budget exhausted"
    assert "error" not in one(adapt, record(failed_child, AGENT))


def test_structured_attribute_values_become_json_values(adapt) -> None:
    args = {"id": 8812, "delta": -3, "rush": True, "ratio": 0.5, "tags": ["a", "b"], "none": None}
    result = {"refund_id": "rf_1", "cents": 4990}
    episode = one(adapt, record(tool("a000000000000002", 110, 150, "refund", "c1", args, result)))
    call, done = episode["steps"]
    assert call["args"] == {"id": 8812, "delta": -3, "rush": True, "ratio": 0.5, "tags": ["a", "b"],
                            "none": None}
    assert done["result"] == {"refund_id": "rf_1", "cents": 4990}
    assert "text" not in done


def test_a_string_result_is_kept_as_text_even_when_it_is_json(adapt) -> None:
    episode = one(adapt, record(tool("a000000000000002", 110, 150, "q", "c1", None, '{"rows": 2}')))
    assert episode["steps"][1]["text"] == '{"rows": 2}'
    assert "args" not in episode["steps"][0]


def test_messages_on_the_inference_details_event_are_read(adapt) -> None:
    details = {"name": "gen_ai.client.inference.operation.details", "attributes": [
        {"key": "gen_ai.input.messages", "value": {"stringValue": json.dumps([U])}},
        {"key": "gen_ai.output.messages", "value": {"stringValue": json.dumps([A2])}}]}
    episode = one(adapt, record(chat("a000000000000001", 10, 20, None, None, events=[details])))
    assert bare(episode["steps"]) == [{"kind": "user", "text": "Refund order 8812"},
                                      {"kind": "assistant", "text": "Refunded."}]


def test_a_json_document_holds_one_export(tmp_path: Path) -> None:
    path = tmp_path / "export.json"
    path.write_text(json.dumps(refund_record(), indent=2), encoding="utf-8")
    [(line, episode)] = list(otlp.episodes(Source(path)))
    assert (line, bare(episode["steps"])) == (1, REFUND_STEPS)
    assert detect_format(Source(path)) is otlp


# -- tools -------------------------------------------------------------------------------------


def test_an_empty_definition_list_declares_no_tools(adapt) -> None:
    episode = one(adapt, record(chat("a000000000000001", 10, 20, [U], [A2],
                                     attributes={"gen_ai.tool.definitions": "[]"})))
    assert episode["tools"] == []


def test_absent_definitions_leave_tools_unknown(adapt) -> None:
    assert "tools" not in one(adapt, refund_record())


def test_definitions_are_the_union_by_name_in_order_of_first_appearance(adapt) -> None:
    first = [{"type": "function", "name": "get_order", "description": "first",
              "parameters": {"type": "object"}, "x-effect": "read"},
             {"type": "function", "function": {"name": "refund", "description": "Refund.",
                                               "effect": "write"}}]
    second = [{"type": "function", "name": "get_order", "description": "second"},
              {"type": "function", "name": "notify"}]
    episode = one(adapt, record(
        chat("a000000000000001", 10, 20, [U], [A2], attributes={"gen_ai.tool.definitions": json.dumps(first)}),
        # structured (an arrayValue of kvlists), not a JSON string
        chat("a000000000000002", 30, 40, [U, A2], [A2], attributes={"gen_ai.tool.definitions": second}),
    ))
    assert episode["tools"] == [
        {"name": "get_order", "description": "first", "parameters": {"type": "object"}, "effect": "read"},
        {"name": "refund", "description": "Refund.", "effect": "write"},
        {"name": "notify"},
    ]


# -- ids, grouping and order -------------------------------------------------------------------


def test_base64_and_uppercase_ids_are_stored_as_lowercase_hex(adapt) -> None:
    b64_trace = base64.b64encode(bytes.fromhex(TRACE)).decode()
    b64_span = base64.b64encode(bytes.fromhex("a000000000000002")).decode()
    lines = [
        record(chat("A000000000000001", 10, 100, [U], [A1], trace=TRACE.upper(), parent=ROOT.upper())),
        record(tool(b64_span, 110, 150, "get_order", "c1", "{}", "ok", trace=b64_trace)),
    ]
    [(line, episode)] = episodes(adapt, *lines)
    assert (line, episode["episode_id"]) == (1, TRACE)
    assert [s["meta"]["span_id"] for s in episode["steps"]] == [
        "a000000000000001", "a000000000000001", "a000000000000002", "a000000000000002"]


def test_an_episode_gathers_its_spans_from_every_line(adapt) -> None:
    other = "0af7651916cd43dd8448eb211c80319c"
    items = episodes(
        adapt,
        record(chat("a000000000000001", 10, 100, [S, U], [A1])),
        record(chat("b000000000000001", 5, 8, [said("user", "Hi")], [said("assistant", "Hello")],
                    trace=other)),
        record(tool("a000000000000002", 110, 150, "get_order", "c1", '{"id": "8812"}', "delivered"),
               chat("a000000000000003", 160, 300, [S, U, A1, T1], [A2])),
    )
    assert [(line, ep["episode_id"], len(ep["steps"])) for line, ep in items] == [
        (1, TRACE, 6), (2, other, 2)]
    assert bare(items[0][1]["steps"]) == REFUND_STEPS


def test_spans_sharing_a_conversation_id_make_one_episode(adapt) -> None:
    second_trace = "0af7651916cd43dd8448eb211c80319c"
    conversation = {"gen_ai.conversation.id": "conv-7"}
    episode = one(adapt, record(
        chat("a000000000000001", 10, 100, [U], [A1], attributes=conversation),
        # no conversation id on the tool span: it joins the conversation of its trace
        tool("a000000000000002", 110, 150, "get_order", "c1", "{}", "delivered"),
        chat("b000000000000001", 900, 950, [U, A1, T1, said("user", "And 8813?")],
             [said("assistant", "Also refunded.")], trace=second_trace, attributes=conversation),
    ))
    assert episode["episode_id"] == "conv-7"
    assert episode["meta"] == {"trace_ids": [TRACE, second_trace]}
    assert [s["kind"] for s in episode["steps"]] == [
        "user", "assistant", "tool_call", "tool_result", "user", "assistant"]


def test_spans_order_by_start_then_span_id_and_results_sit_at_their_span_end(adapt) -> None:
    episode = one(adapt, record(
        tool("a00000000000000b", 100, 400, "slow", "c1"),
        tool("a00000000000000c", 150, 200, "fast", "c2"),
        tool("a00000000000000a", 100, 120, "first", "c0"),
    ))
    assert [(s["kind"], s["call_id"]) for s in episode["steps"]] == [
        ("tool_call", "c0"), ("tool_call", "c1"), ("tool_result", "c0"),
        ("tool_call", "c2"), ("tool_result", "c2"), ("tool_result", "c1")]


def test_a_span_exported_twice_counts_once(adapt) -> None:
    executed = tool("a000000000000002", 110, 150, "get_order", "c1", "{}", "ok")
    episode = one(adapt, record(executed), record(executed))
    assert len(episode["steps"]) == 2


# -- malformed records -------------------------------------------------------------------------


def test_bad_lines_are_quarantined_and_the_rest_loads(adapt) -> None:
    items = episodes(adapt, refund_record(), '{"resourceSpans": [', {"spans": []},
                     record(span("a0000000000000zz", 1, 2, {}, trace="ffff" * 8)))
    assert items[0][0] == 1
    assert [(i.line, i.reason[:40]) for i in items[1:]] == [
        (2, "invalid JSON: unexpected end of data: li"),
        (3, "not an OTLP record: expected an object w"),
        (4, "resourceSpans[0].scopeSpans[0].spans[0]."),
    ]
    assert items[3].reason.endswith(
        "spanId is 'a0000000000000zz': expected 16 hex digits or the base64 of 8 bytes")
    assert items[1].raw == b'{"resourceSpans": ['


def test_an_episode_missing_spans_of_a_quarantined_line_is_quarantined(adapt) -> None:
    broken = record(tool("a000000000000009", 1, 2, "x", "c9"),
                    span("a000000000000008", 2, 3, {}))
    broken["resourceSpans"][0]["scopeSpans"][0]["spans"][1]["startTimeUnixNano"] = "soon"
    items = episodes(adapt, refund_record(), broken)
    assert [type(i).__name__ for i in items] == ["Quarantined", "Quarantined"]
    assert items[0].line == 1
    assert items[0].reason == (f"episode {TRACE}: trace {TRACE} also has spans on line 2, which "
                               "was quarantined; not loaded incomplete")
    assert "startTimeUnixNano is 'soon'" in items[1].reason


def test_unreadable_message_json_quarantines_the_episode_naming_the_span(adapt) -> None:
    bad = chat("a000000000000001", 10, 100, None, None,
               attributes={"gen_ai.input.messages": '[{"role": "user", '})
    [item] = episodes(adapt, record(bad, AGENT))
    assert isinstance(item, Quarantined)
    assert item.line == 1
    assert item.reason.startswith(f"episode {TRACE}: span a000000000000001 (line 1): "
                                  "gen_ai.input.messages is a string that is not JSON")
    assert json.loads(item.raw)["spanId"] == "a000000000000001"


def test_an_event_name_that_is_not_a_string_quarantines_the_episode(adapt) -> None:
    # found by the adapter fuzz test: a list as an event name once crashed the adapter
    bad = chat("a000000000000001", 10, 100, None, None, events=[
        {**event("gen_ai.user.message", {"content": "hi"}), "name": ["gen_ai.user.message"]}])
    [item] = episodes(adapt, record(bad, AGENT))
    assert isinstance(item, Quarantined)
    assert "events[0].name is a list, not a string" in item.reason


@pytest.mark.parametrize(("attributes", "reason"), [
    ({"gen_ai.operation.name": ["chat"]}, "gen_ai.operation.name is a list, not a string"),
    ({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.id": ["c1"]},
     "gen_ai.tool.call.id is a list, not a string"),
    ({"gen_ai.tool.definitions": '[{"name": ["lookup"]}]'},
     "gen_ai.tool.definitions[0].name is a list, not a string"),
    ({"gen_ai.tool.definitions": '[{"function": {"name": {"n": 1}}}]'},
     "gen_ai.tool.definitions[0].function.name is an object, not a string"),
], ids=["operation-name", "tool-call-id", "definition-name", "function-name"])
def test_a_name_or_id_that_is_not_a_string_quarantines_the_episode(adapt, attributes, reason) -> None:
    # each was once used as a set member or dict key: a list raised TypeError (unhashable)
    [item] = episodes(adapt, record(span("a000000000000001", 10, 20, attributes)))
    assert isinstance(item, Quarantined)
    assert item.reason == f"episode {TRACE}: span a000000000000001 (line 1): {reason}"


def test_a_message_part_id_that_is_not_a_string_quarantines_the_episode(adapt) -> None:
    # once looked up in the set of recorded call ids: a list raised TypeError (unhashable)
    asked = {"role": "assistant", "parts": [{"type": "tool_call", "id": ["c1"], "name": "ping"}]}
    [item] = episodes(adapt, record(chat("a000000000000001", 10, 20, [U], [asked])))
    assert isinstance(item, Quarantined)
    assert item.reason == (f"episode {TRACE}: span a000000000000001 output message 0.parts[0].id "
                           "is a list, not a string")


@pytest.mark.parametrize("text", ["--5", "\u00b2", "1" * 5000],
                         ids=["double-minus", "superscript-two", "5000-digits"])
def test_an_int_value_that_is_no_integer_quarantines_the_episode(adapt, text) -> None:
    # "²" passes str.isdigit, "--5" passed lstrip("-"), and int() reads at most 4300 digits:
    # int() once raised ValueError on each
    bad = span("a000000000000001", 10, 20, {})
    bad["attributes"] = [{"key": "retries", "value": {"intValue": text}}]
    [item] = episodes(adapt, record(bad))
    assert isinstance(item, Quarantined)
    assert item.reason == (f"episode {TRACE}: span a000000000000001 (line 1): "
                           f"attributes['retries']: intValue {text!r} is not an integer")


@pytest.mark.parametrize("stamp", ["\u00b2", "1" * 5000], ids=["superscript-two", "5000-digits"])
def test_a_time_of_digits_that_is_no_integer_quarantines_the_line(adapt, stamp) -> None:
    # int() once raised ValueError on both
    bad = span("a000000000000001", 10, 20, {})
    bad["startTimeUnixNano"] = stamp
    [item] = episodes(adapt, record(bad))
    assert isinstance(item, Quarantined)
    assert item.reason == (f"resourceSpans[0].scopeSpans[0].spans[0].startTimeUnixNano is {stamp!r}, "
                           "not nanoseconds since the Unix epoch")


def test_integers_beyond_64_bits_become_their_decimal_text_as_ids_and_errors(adapt) -> None:
    # orjson cannot write them: their text once raised TypeError
    big = {"gen_ai.conversation.id": 2**64, "error.type": 2**64}
    episode = one(adapt, record(tool("a000000000000002", 110, 150, "refund", "c1", attributes=big)))
    assert (episode["episode_id"], episode["steps"][1]["error"]) == (
        "18446744073709551616", "18446744073709551616")


def test_a_span_too_deep_for_orjson_to_write_is_quarantined_without_its_raw(adapt) -> None:
    # orjson reads 1024 levels but writes 255: keeping such a span as `raw` once raised TypeError
    value = {"intValue": "x"}
    for _ in range(100):  # 300 levels
        value = {"arrayValue": {"values": [value]}}
    bad = span("a000000000000001", 10, 20, {})
    bad["attributes"] = [{"key": "k", "value": value}]
    [item] = episodes(adapt, record(bad))
    assert isinstance(item, Quarantined)
    assert item.reason == (f"episode {TRACE}: span a000000000000001 (line 1): "
                           f"attributes['k']{'[0]' * 100}: intValue 'x' is not an integer")
    assert item.raw is None


def test_an_unknown_role_quarantines_the_episode(adapt) -> None:
    [item] = episodes(adapt, record(chat("a000000000000001", 10, 100, [said("critic", "meh")], [])))
    assert isinstance(item, Quarantined)
    assert "span a000000000000001 input message 0: unknown role 'critic'" in item.reason


# -- detection and ingest of the sample --------------------------------------------------------


def test_the_sample_is_detected_as_otlp() -> None:
    source = Source(SAMPLE)
    assert detect_format(source) is otlp
    assert not openinference.claims(source)


def test_sample_ingest(store) -> None:
    report = store.ingest([SAMPLE])
    assert (report.added, report.quarantined) == (2, 1)
    assert store.sql("SELECT line, reason FROM quarantine").rows() == [
        (4, "resourceSpans[0].scopeSpans[0].spans[0].traceId is 'not-a-trace-id': expected 32 hex "
            "digits or the base64 of 16 bytes")]
    assert store.sql(
        "SELECT episode_id, source_format, source_line, case_id, agent, model, tools_declared, "
        "output IS NULL, error, termination, reward FROM episodes ORDER BY source_line").rows() == [
        ("conv-refund-8812", "otlp", 1, "refund-broken-item", "refunds-assistant",
         "gpt-4o-2024-08-06", True, False, None, None, None),
        ("0af7651916cd43dd8448eb211c80319c", "otlp", 2, None, "calendar-bot", "gpt-4o-mini", False,
         True, "agent stopped: step budget exhausted", None, None),
    ]
    assert store.sql(
        "SELECT episode_id, call_index, tool_name, call_id, status, error, effect, "
        "result_step_idx IS NOT NULL FROM tool_calls ORDER BY episode_id, call_index").rows() == [
        ("0af7651916cd43dd8448eb211c80319c", 0, "move_event", "call_m1", "ok", None, None, True),
        ("0af7651916cd43dd8448eb211c80319c", 1, "cancel_event", "call_c1", "error", "EventNotFound",
         None, True),
        ("conv-refund-8812", 0, "get_order", "call_q1", "ok", None, "read", True),
        ("conv-refund-8812", 1, "issue_refund", "call_r1", "error", "payment gateway timeout",
         "write", True),
        ("conv-refund-8812", 2, "issue_refund", "call_r2", "ok", None, "write", True),
    ]
    assert store.sql("SELECT episode_id, position, name, effect FROM tool_definitions "
                     "ORDER BY position").rows() == [
        ("conv-refund-8812", 0, "get_order", "read"), ("conv-refund-8812", 1, "issue_refund", "write")]


def test_sample_leaks_are_in_the_transcript(store) -> None:
    store.ingest([SAMPLE])
    found = store.sql(
        "SELECT DISTINCT episode_id, origin FROM transcript WHERE contains(text, ?) OR contains(text, ?) "
        "ORDER BY episode_id", params=["sk_live_51HxQeRefundGatewaySecret", "7730-5521-ZULU"]).rows()
    assert found == [("0af7651916cd43dd8448eb211c80319c", "step.text"), ("conv-refund-8812", "step.text")]


# -- native -> otlp (emit_otlp) -> ingest --------------------------------------------------------

NATIVE_SAMPLES = SAMPLE.parents[1] / "native"
CALLS = ("SELECT episode_id, call_index, tool_name, args, args_text, result_text, "
         "CASE status WHEN 'denied' THEN 'error' ELSE status END FROM tool_calls "
         "ORDER BY episode_id, call_index")
ROUND_TRIP = {
    "episode_id": "rt-1", "case_id": "book", "agent": "travel", "model": "gpt-4o",
    "started_at": "2026-05-01T08:00:00Z", "error": "gave up",
    "tools": [{"name": "search", "effect": "read", "parameters": {"type": "object"}},
              {"name": "book", "effect": "write"}],
    "steps": [
        {"kind": "system", "text": "Book what is asked."},
        {"kind": "user", "text": "Book LIS to BER."},
        {"kind": "assistant", "text": "Searching."},
        {"kind": "tool_call", "name": "search", "call_id": "c1", "args": {"from": "LIS"}},
        {"kind": "tool_call", "name": "search", "call_id": "", "args": '{"from": "OPO"}'},
        {"kind": "tool_call", "name": "search", "call_id": "c1", "args": {"from": "FAO"}},
        {"kind": "tool_result", "call_id": "c1", "text": "2 flights"},
        {"kind": "tool_result", "call_id": "", "result": {"flights": []}, "status": "error",
         "error": "no route"},
        {"kind": "budget", "steps_used": 3},
        {"kind": "tool_call", "name": "book", "call_id": "c3", "args": {"flight": "FR1"}},
        {"kind": "tool_result", "call_id": "c3", "text": "not allowed", "status": "denied"},
        {"kind": "assistant", "text": "Retrying the booking."},
        {"kind": "tool_call", "name": "book", "call_id": "c4", "args": "{broken"},
    ],
}


def _ingest(tmp_path: Path, name: str, lines: list[bytes], fmt: str) -> list[tuple]:
    path = tmp_path / f"{name}.jsonl"
    path.write_bytes(b"".join(lines))
    with open_store(tmp_path / f"{name}.duckdb") as store:
        report = store.ingest([path])
        assert (report.files[0].format, report.quarantined) == (fmt, 0)
        return store.sql(CALLS).rows()


def test_native_to_otlp_gives_the_same_tool_calls(tmp_path: Path) -> None:
    native = _ingest(tmp_path, "native", [orjson.dumps(ROUND_TRIP) + b"\n"], "native")
    emitted = _ingest(tmp_path, "otlp", [orjson.dumps(to_otlp(ROUND_TRIP)) + b"\n"], "otlp")
    assert [(row[2], row[6]) for row in native] == [
        ("search", "ok"), ("search", "error"), ("search", "missing"), ("book", "error"),
        ("book", "missing")]
    assert emitted == native


def test_emitted_record_uses_the_newer_genai_attributes() -> None:
    [batch] = to_otlp(ROUND_TRIP)["resourceSpans"]
    spans = batch["scopeSpans"][0]["spans"]
    decoded = [(s["name"], otlp.attributes(s["attributes"], "a"), s.get("status")) for s in spans]
    root = decoded[0]
    assert root[0] == "invoke_agent travel"
    assert root[2] == {"code": 2, "message": "gave up"}
    assert json.loads(root[1]["gen_ai.tool.definitions"]) == [
        {"type": "function", "name": "search", "parameters": {"type": "object"}, "x-effect": "read"},
        {"type": "function", "name": "book", "x-effect": "write"}]
    assert otlp.attributes(batch["resource"]["attributes"], "r") == {
        "service.name": "travel", "tracelab.case_id": "book"}
    assert [name for name, _, _ in decoded] == [
        "invoke_agent travel", "chat gpt-4o", "chat gpt-4o", "execute_tool search",
        "execute_tool search", "chat gpt-4o", "execute_tool book", "chat gpt-4o"]
    denied = decoded[6]
    assert denied[1]["error.type"] == "denied"
    assert denied[2] == {"code": 2}
    first_chat, second_chat = decoded[1][1], decoded[2][1]
    assert json.loads(first_chat["gen_ai.input.messages"]) == [
        {"role": "system", "parts": [{"type": "text", "content": "Book what is asked."}]},
        {"role": "user", "parts": [{"type": "text", "content": "Book LIS to BER."}]}]
    # c1 is recorded by its execute_tool span (the part's id says so); the id-less call with a
    # result only by its span; the result-less second c1 by a part of a chat span of its own, at
    # its own time (after the spans of the calls before it), its reused id dropped
    assert json.loads(first_chat["gen_ai.output.messages"]) == [{"role": "assistant", "parts": [
        {"type": "text", "content": "Searching."},
        {"type": "tool_call", "id": "c1", "name": "search", "arguments": {"from": "LIS"}}]}]
    assert json.loads(second_chat["gen_ai.output.messages"]) == [{"role": "assistant", "parts": [
        {"type": "tool_call", "id": None, "name": "search", "arguments": {"from": "FAO"}}]}]
    assert {span["traceId"] for span in spans} == {hashlib.sha256(b"rt-1").hexdigest()[:32]}


def _valid_native_samples(tmp_path: Path) -> list[dict]:
    with open_store(tmp_path / "samples.duckdb") as store:
        store.ingest([NATIVE_SAMPLES])
        stored = set(store.sql("SELECT source_uri, source_line FROM episodes").rows())
    found = []
    for path in sorted(NATIVE_SAMPLES.glob("*.jsonl")):
        for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
            if (str(path), number) in stored:
                found.append(json.loads(line))
    return found


def test_native_samples_and_a_generated_corpus_round_trip_through_otlp(tmp_path: Path) -> None:
    if not NATIVE_SAMPLES.is_dir():
        pytest.skip(f"no native samples at {NATIVE_SAMPLES}")
    episodes = _valid_native_samples(tmp_path) + list(iter_episodes(120, 5))
    native = _ingest(tmp_path, "native", [orjson.dumps(e) + b"\n" for e in episodes], "native")
    emitted = _ingest(tmp_path, "otlp", [orjson.dumps(to_otlp(e)) + b"\n" for e in episodes], "otlp")
    assert len(native) > 500
    assert emitted == native


def test_overlapping_tool_spans_sharing_a_call_id_each_pair_with_their_own_call(store, tmp_path) -> None:
    # the outer transfer runs 110-400 ms and succeeds; the inner audit, same call id, fails at 150 ms
    # (by the sequential rule the inner result would pair with the outer call: a failed transfer)
    path = tmp_path / "overlap.jsonl"
    path.write_text(json.dumps(record(
        tool("a000000000000002", 110, 400, "transfer", "c1", '{"amount": 5}', "sent"),
        tool("a000000000000003", 120, 150, "audit", "c1", "{}", status={"code": 2, "message": "denied"}),
    )) + "\n")

    report = store.ingest([path])

    assert (report.added, report.quarantined) == (1, 0)
    assert store.sql("SELECT tool_name, call_id, call_step_idx, result_step_idx, status, error, result_text "
                     "FROM tool_calls ORDER BY call_index").rows() == [
        ("transfer", "c1", 0, 3, "ok", None, "sent"),
        ("audit", "c1", 1, 2, "error", "denied", None),
    ]
    assert store.sql("SELECT count(*) FROM steps WHERE meta::VARCHAR LIKE '%_tl_%'").item() == 0
