"""OpenInference spans (Phoenix exports): the mapping, the accepted shapes, and sample ingest."""
from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from tests.formats.span_builders import bare, record
from tests.formats.span_builders import span as otlp_span
from tracelab.formats import openinference, otlp
from tracelab.formats.base import Quarantined
from tracelab.formats.source import Source
from tracelab.ingest.prepare import detect_format

SAMPLES = Path(__file__).resolve().parents[2] / "sample_traces" / "openinference"
TRACE = "8c1f4a9e0b7d2c36a5e4f3b2c1d0e9f8"
ROOT = "a11e0c2b3d4f5061"


def phoenix(span_id: str, kind: str, start: str, end: str, attributes: dict[str, Any], *,
            parent: str | None = ROOT, status: str = "OK", message: str = "",
            events: list | None = None, name: str = "span") -> dict[str, Any]:
    """A span as Phoenix exports it, attributes flattened."""
    return {"name": name, "context": {"trace_id": TRACE, "span_id": span_id}, "span_kind": kind,
            "parent_id": parent, "start_time": f"2026-03-03T14:00:{start}Z",
            "end_time": f"2026-03-03T14:00:{end}Z", "status_code": status,
            "status_message": message, "attributes": {"openinference.span.kind": kind, **attributes},
            "events": events or []}


def messages(prefix: str, *items: dict[str, Any]) -> dict[str, Any]:
    """Flattened `llm.input_messages` / `llm.output_messages` attributes."""
    flat: dict[str, Any] = {}
    for i, message in enumerate(items):
        for key, value in message.items():
            if key == "tool_calls":
                for j, (call_id, name, arguments) in enumerate(value):
                    at = f"{prefix}.{i}.message.tool_calls.{j}.tool_call"
                    flat.update({f"{at}.id": call_id, f"{at}.function.name": name,
                                 f"{at}.function.arguments": arguments})
            else:
                flat[f"{prefix}.{i}.message.{key}"] = value
    return flat


SYSTEM = {"role": "system", "content": "Only managers change salaries."}
USER = {"role": "user", "content": "Look up E-1."}
ASKED = {"role": "assistant", "content": "Checking.", "tool_calls": [("c_lk", "lookup", '{"id": "E-1"}')]}
ANSWER = {"role": "tool", "tool_call_id": "c_lk", "content": "found"}
DONE = {"role": "assistant", "content": "Done."}
TOOLS = {
    "llm.tools.0.tool.json_schema": json.dumps({"type": "function", "function": {
        "name": "lookup", "description": "Find one.", "parameters": {"type": "object"},
        "x-effect": "read"}}),
    "llm.tools.1.tool.name": "update_salary",
    "llm.tools.1.tool.json_schema": "{'type': 'function'}",  # a Python repr, not JSON
}
FLAT_SPANS = [
    phoenix(ROOT, "AGENT", "00.000", "09.000", {
        "agent.name": "hr", "user.id": "u-9", "session.id": "s-1", "tag.tags": ["hr"],
        "metadata": json.dumps({"case_id": "salary-1", "reward": 0.5, "termination": "completed"})},
        parent=None),
    phoenix("b000000000000001", "LLM", "00.100", "02.000", {
        "llm.model_name": "claude-x", **messages("llm.input_messages", SYSTEM, USER),
        **messages("llm.output_messages", ASKED), **TOOLS}),
    phoenix("b000000000000002", "TOOL", "02.100", "02.600", {
        "tool.name": "lookup", "input.value": '{"id": "E-1"}', "output.value": "found"}),
    phoenix("b000000000000003", "LLM", "02.700", "04.000", {
        "llm.model_name": "claude-x", **messages("llm.input_messages", SYSTEM, USER, ASKED, ANSWER),
        **messages("llm.output_messages", DONE)}),
]
HR_STEPS = [
    {"kind": "system", "text": "Only managers change salaries."},
    {"kind": "user", "text": "Look up E-1."},
    {"kind": "assistant", "text": "Checking."},
    # the TOOL span has no tool.id: it records the requested call of its name and takes its id
    {"kind": "tool_call", "name": "lookup", "call_id": "c_lk", "args": '{"id": "E-1"}'},
    {"kind": "tool_result", "call_id": "c_lk", "name": "lookup", "text": "found", "status": "ok"},
    {"kind": "assistant", "text": "Done."},
]


def one(adapt, *records) -> dict:
    [(line, episode)] = adapt(openinference, *records)
    assert line == 1
    return episode


def nest(flat: dict[str, Any]) -> dict[str, Any]:
    """Flattened attributes as the nested objects and lists some exports write."""
    root: dict[str, Any] = {}
    for key, value in flat.items():
        *path, last = key.split(".")
        node = root
        for part in path:
            node = node.setdefault(part, {})
        node[last] = value

    def lists(node: Any) -> Any:
        if not isinstance(node, dict):
            return node
        if node and all(k.isdigit() for k in node):
            return [lists(node[k]) for k in sorted(node, key=int)]
        return {k: lists(v) for k, v in node.items()}

    return lists(root)


# -- mapping -----------------------------------------------------------------------------------


def test_phoenix_spans_map_to_the_native_episode(adapt) -> None:
    episode = one(adapt, *FLAT_SPANS)
    assert {**episode, "steps": bare(episode["steps"])} == {
        "episode_id": TRACE,
        "agent": "hr",
        "principal": {"user_id": "u-9"},
        "tags": ["hr"],
        "case_id": "salary-1",
        "reward": 0.5,
        "termination": "completed",
        "model": "claude-x",
        "started_at": "2026-03-03T14:00:00.000000Z",
        "ended_at": "2026-03-03T14:00:09.000000Z",
        "meta": {"session.id": "s-1"},
        "input": "Look up E-1.",
        "output": "Done.",
        "tools": [
            {"name": "lookup", "description": "Find one.", "parameters": {"type": "object"},
             "effect": "read"},
            {"name": "update_salary"},
        ],
        "steps": HR_STEPS,
    }


def dataframe_row(span: dict[str, Any]) -> dict[str, Any]:
    """A row of Phoenix's spans dataframe saved with ``to_json(orient="records", lines=True)``.

    One column per attribute; list attributes hold objects with dotted keys; times are epoch
    milliseconds.
    """
    row = {key: value for key, value in span.items() if key not in ("context", "attributes")}
    row.update({"context.trace_id": span["context"]["trace_id"],
                "context.span_id": span["context"]["span_id"]})
    for key in ("start_time", "end_time"):
        stamp = dt.datetime.fromisoformat(span[key].replace("Z", "+00:00"))
        row[key] = int(stamp.timestamp() * 1000)
    for key, value in span["attributes"].items():
        prefix = next((p for p in ("llm.input_messages", "llm.output_messages", "llm.tools")
                       if key.startswith(f"{p}.")), None)
        if prefix is None:
            row[f"attributes.{key}"] = value
            continue
        index, rest = key[len(prefix) + 1:].split(".", 1)
        items = row.setdefault(f"attributes.{prefix}", [])
        items.extend({} for _ in range(int(index) + 1 - len(items)))
        items[int(index)][rest] = value
    return row


def test_nested_and_dataframe_shapes_give_the_same_episode(adapt) -> None:
    flat = one(adapt, *FLAT_SPANS)
    assert one(adapt, *[{**s, "attributes": nest(s["attributes"])} for s in FLAT_SPANS]) == flat
    rows = [dataframe_row(s) for s in FLAT_SPANS]
    assert rows[1]["attributes.llm.input_messages"][1] == {"message.role": "user",
                                                           "message.content": "Look up E-1."}
    assert one(adapt, *rows) == flat


def test_tool_span_errors_take_the_status_message_else_the_exception(adapt) -> None:
    exception = [{"name": "exception", "timestamp": "2026-03-03T14:00:02.500Z",
                  "attributes": {"exception.type": "PermissionError",
                                 "exception.message": "role is viewer"}}]
    by_event = phoenix("b000000000000002", "TOOL", "02.100", "02.600",
                       {"tool.name": "update", "tool.id": "c9"}, status="ERROR", events=exception)
    by_status = phoenix("b000000000000004", "TOOL", "03.100", "03.600",
                        {"tool.name": "update", "tool.id": "c10"}, status="ERROR",
                        message="forbidden", events=exception)
    episode = one(adapt, by_event, by_status)
    assert bare(episode["steps"]) == [
        {"kind": "tool_call", "name": "update", "call_id": "c9"},
        {"kind": "tool_result", "call_id": "c9", "name": "update", "status": "error",
         "error": "role is viewer"},
        {"kind": "tool_call", "name": "update", "call_id": "c10"},
        {"kind": "tool_result", "call_id": "c10", "name": "update", "status": "error",
         "error": "forbidden"},
    ]
    assert "output" not in episode  # the run ended on a tool result


def test_a_tool_span_with_its_own_id_keeps_it_and_unmatched_calls_stay_parts(adapt) -> None:
    asked = {"role": "assistant", "tool_calls": [("c1", "search", "{}"), ("c2", "search", '{"p": 2}')]}
    episode = one(adapt,
                  phoenix("b000000000000001", "LLM", "00.100", "01.000",
                          {**messages("llm.input_messages", USER), **messages("llm.output_messages", asked)}),
                  phoenix("b000000000000002", "TOOL", "01.100", "01.200",
                          {"tool.name": "search", "tool.id": "c2", "output.value": "page 2"}))
    assert bare(episode["steps"]) == [
        {"kind": "user", "text": "Look up E-1."},
        {"kind": "tool_call", "name": "search", "call_id": "c1", "args": "{}"},
        {"kind": "tool_call", "name": "search", "call_id": "c2"},
        {"kind": "tool_result", "call_id": "c2", "name": "search", "text": "page 2", "status": "ok"},
    ]


def test_message_contents_and_legacy_completions(adapt) -> None:
    contents = {
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.contents.0.message_content.type": "text",
        "llm.input_messages.0.message.contents.0.message_content.text": "What is this?",
        "llm.input_messages.0.message.contents.1.message_content.type": "image",
        "llm.input_messages.0.message.contents.1.message_content.image.image.url": "https://x/y.png",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.content": "A cat.",
    }
    legacy = {"llm.prompts": ["Say hi"], "llm.choices.0.completion.text": "hi"}
    first = one(adapt, phoenix("b000000000000001", "LLM", "00.100", "01.000", contents))
    assert bare(first["steps"]) == [
        {"kind": "user", "text": "What is this?"},
        {"kind": "assistant", "text": "A cat."},
    ]
    assert first["steps"][0]["meta"]["parts"] == [{"type": "image", "image.image.url": "https://x/y.png"}]
    second = one(adapt, phoenix("b000000000000001", "LLM", "00.100", "01.000", legacy))
    assert bare(second["steps"]) == [{"kind": "user", "text": "Say hi"},
                                     {"kind": "assistant", "text": "hi"}]


def test_an_empty_tool_list_declares_none_and_no_list_leaves_tools_unknown(adapt) -> None:
    listed = phoenix("b000000000000001", "LLM", "00.100", "01.000",
                     {"llm.tools": [], **messages("llm.input_messages", USER)})
    assert one(adapt, listed)["tools"] == []
    assert "tools" not in one(adapt, FLAT_SPANS[2])


@pytest.mark.parametrize(("start", "expected"), [
    ("2026-03-03T14:00:00.123456789Z", "2026-03-03T14:00:00.123456Z"),
    ("2026-03-03T16:00:00+02:00", "2026-03-03T14:00:00.000000Z"),
    ("2026-03-03T14:00:00", "2026-03-03T14:00:00.000000Z"),
    (1772546400123, "2026-03-03T14:00:00.123000Z"),
    (1772546400.5, "2026-03-03T14:00:00.500000Z"),
    ("1772546400000000000", "2026-03-03T14:00:00.000000Z"),
])
def test_times_in_iso_or_epoch_numbers(adapt, start, expected) -> None:
    span = {**FLAT_SPANS[2], "start_time": start, "end_time": None}
    episode = one(adapt, span)
    assert (episode["started_at"], episode["ended_at"]) == (expected, expected)


# -- malformed records -------------------------------------------------------------------------


def test_bad_records_are_quarantined_and_their_traces_not_loaded_incomplete(adapt) -> None:
    bad_id = {**FLAT_SPANS[3], "context": {"trace_id": TRACE, "span_id": "xyz"}}
    other = {**FLAT_SPANS[2], "context": {"trace_id": "ab" * 16, "span_id": "c000000000000001"}}
    items = adapt(openinference, *FLAT_SPANS[:3], '{"name": "cut', bad_id, other)
    assert [(type(i).__name__, i.line if isinstance(i, Quarantined) else i[0]) for i in items] == [
        ("Quarantined", 1), ("Quarantined", 4), ("Quarantined", 5), ("tuple", 6)]
    assert items[0].reason == (f"episode {TRACE}: trace {TRACE} also has spans on line 5, which "
                               "was quarantined; not loaded incomplete")
    assert items[1].reason.startswith("invalid JSON")
    assert items[2].reason == ("span.context.span_id is 'xyz': expected 16 hex digits or the "
                               "base64 of 8 bytes")


def test_a_tool_definition_without_a_name_quarantines_the_episode(adapt) -> None:
    nameless = phoenix("b000000000000001", "LLM", "00.100", "01.000",
                       {"llm.tools.0.tool.json_schema": '{"type": "function"}'})
    [item] = adapt(openinference, nameless)
    assert isinstance(item, Quarantined)
    assert item.reason == (f"episode {TRACE}: span b000000000000001 (line 1): llm.tools.0: no "
                           "tool.name and no name in tool.json_schema")


@pytest.mark.parametrize(("kind", "attributes", "reason"), [
    ("TOOL", {"tool.name": "lookup", "tool.id": [1]}, "tool.id is a list, not a string"),
    ("LLM", {"llm.tools.0.tool.name": [1]}, "llm.tools.0.tool.name is a list, not a string"),
    ("LLM", {"llm.tools.0.tool.json_schema": {"name": {"n": 1}}},
     "llm.tools.0.tool.json_schema name is an object, not a string"),
], ids=["tool-id", "tool-name", "schema-name"])
def test_a_tool_name_or_id_that_is_not_a_string_quarantines_the_episode(adapt, kind, attributes,
                                                                        reason) -> None:
    # each was once used as a set member or dict key: a list raised TypeError (unhashable)
    [item] = adapt(openinference, phoenix("b000000000000001", kind, "00.100", "01.000", attributes))
    assert isinstance(item, Quarantined)
    assert item.reason == f"episode {TRACE}: span b000000000000001 (line 1): {reason}"


def test_a_call_id_taken_by_name_that_is_not_a_string_quarantines_the_episode(adapt) -> None:
    # the TOOL span without tool.id takes the id of the requested call of its name; a list
    # once went into the set of recorded call ids and raised TypeError (unhashable)
    asked = {"role": "assistant", "tool_calls": [([1], "lookup", "{}")]}
    [item] = adapt(openinference,
                   phoenix("b000000000000001", "LLM", "00.100", "01.000",
                           messages("llm.output_messages", asked)),
                   phoenix("b000000000000002", "TOOL", "01.100", "01.200", {"tool.name": "lookup"}))
    assert isinstance(item, Quarantined)
    assert item.reason == (f"episode {TRACE}: span b000000000000001 output message 0.parts[0].id "
                           "is a list, not a string")


@pytest.mark.parametrize("start", ["\u00b2", "1" * 5000], ids=["superscript-two", "5000-digits"])
def test_a_time_of_digits_that_is_no_integer_quarantines_the_span(adapt, start) -> None:
    # "²" passes str.isdigit, and int() reads at most 4300 digits: int() once raised ValueError
    [item] = adapt(openinference, {**FLAT_SPANS[2], "start_time": start})
    assert isinstance(item, Quarantined)
    assert item.reason == f"span.start_time is {start!r}, not nanoseconds since the Unix epoch"


def test_a_list_index_that_int_cannot_read_is_no_item(adapt) -> None:
    # "²" passes str.isdigit: int() once raised ValueError; like any other non-number, it is no index
    llm = phoenix("b000000000000001", "LLM", "00.100", "01.000", {
        **messages("llm.input_messages", USER), "llm.input_messages.\u00b2.message.role": "user"})
    assert bare(one(adapt, llm)["steps"]) == [{"kind": "user", "text": "Look up E-1."}]


def test_attributes_nested_deeper_than_the_recursion_limit_are_flattened() -> None:
    # flatten once recursed once per level: 1000 levels (JSON allows 1024) raised RecursionError
    nested: Any = "v"
    for _ in range(1000):
        nested = {"x": nested}
    flat: dict[str, Any] = {}
    openinference.flatten(nested, "", flat)
    assert flat == {".".join(["x"] * 1000): "v"}


# -- OTLP with OpenInference attributes, detection, samples ------------------------------------


def test_otlp_spans_with_openinference_kinds_are_read_as_openinference(adapt, write_jsonl) -> None:
    line = record(otlp_span("b000000000000002", 10, 20, {
        "openinference.span.kind": "TOOL", "tool.name": "lookup", "tool.id": "c1",
        "input.value": "{}", "output.value": "found"}, trace=TRACE))
    [(_, episode)] = adapt(openinference, line)
    assert bare(episode["steps"]) == [
        {"kind": "tool_call", "name": "lookup", "call_id": "c1", "args": "{}"},
        {"kind": "tool_result", "call_id": "c1", "name": "lookup", "text": "found", "status": "ok"},
    ]
    path = write_jsonl([line], "oi.jsonl")
    assert detect_format(Source(path)) is openinference
    genai = write_jsonl([record(otlp_span("b000000000000002", 10, 20, {
        "gen_ai.operation.name": "execute_tool"}))], "genai.jsonl")
    assert detect_format(Source(genai)) is otlp


@pytest.mark.parametrize("name", ["phoenix_spans.jsonl", "otlp_export.jsonl"])
def test_samples_are_detected_as_openinference(name: str) -> None:
    assert detect_format(Source(SAMPLES / name)) is openinference


def test_sample_ingest(store) -> None:
    report = store.ingest([SAMPLES])
    assert (report.added, report.quarantined) == (3, 2)
    assert store.sql("SELECT source_uri, line, reason FROM quarantine ORDER BY source_uri").rows() == [
        (str(SAMPLES / "otlp_export.jsonl"), 2, "resourceSpans[0].scopeSpans[0].spans[0]."
         "startTimeUnixNano is 'yesterday', not nanoseconds since the Unix epoch"),
        (str(SAMPLES / "phoenix_spans.jsonl"), 4,
         "invalid JSON: unexpected end of data: line 1 column 152 (char 151)"),
    ]
    assert store.sql(
        "SELECT episode_id, source_line, case_id, agent, agent_version, model, termination, "
        "tools_declared, output IS NULL FROM episodes ORDER BY episode_id").rows() == [
        ("0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a", 5, "close-ticket", None, None, "gpt-4o-mini", None,
         False, True),
        ("3f2e1d0c9b8a79685746352413021f0e", 1, "fix-config-typo", "repo-fixer", None, "gpt-4.1",
         None, True, True),
        ("8c1f4a9e0b7d2c36a5e4f3b2c1d0e9f8", 1, "salary-change-viewer", "hr-assistant", "0.9.1",
         "claude-3-5-sonnet-20241022", "completed", True, False),
    ]
    assert store.sql(
        "SELECT episode_id, tool_name, call_id, status, error, effect FROM tool_calls "
        "ORDER BY episode_id, call_index").rows() == [
        ("0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a", "close_ticket", "call_t1", "ok", None, None),
        ("3f2e1d0c9b8a79685746352413021f0e", "read_file", "call_rf", "ok", None, "read"),
        ("3f2e1d0c9b8a79685746352413021f0e", "write_file", "call_wf", "error",
         "EROFS: read-only file system", "write"),
        ("8c1f4a9e0b7d2c36a5e4f3b2c1d0e9f8", "lookup_employee", "call_lk1", "ok", None, "read"),
        ("8c1f4a9e0b7d2c36a5e4f3b2c1d0e9f8", "update_salary", "call_up1", "error",
         "permission denied: caller role is viewer", "write"),
    ]
    leaks = store.sql("SELECT DISTINCT episode_id FROM transcript WHERE contains(text, ?) "
                      "OR contains(text, ?) OR contains(text, ?) ORDER BY 1",
                      params=["hrdb-tok-7f3a9c2e11", "Pr0d-Passw0rd!", "T0ken-ab12cd34"]).rows()
    assert leaks == [("0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a",), ("3f2e1d0c9b8a79685746352413021f0e",),
                     ("8c1f4a9e0b7d2c36a5e4f3b2c1d0e9f8",)]
