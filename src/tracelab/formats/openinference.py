"""OpenInference spans, as Phoenix exports them (`openinference`, docs/formats.md).

Accepted shapes (one span per line, or a `.json` array of spans, or a
``{"data": [spans]}`` document as Phoenix's REST API returns it):

- a Phoenix span: ``{"name", "context": {"trace_id", "span_id"}, "parent_id",
  "span_kind", "start_time", "end_time", "status_code", "status_message",
  "attributes", "events"}``;
- a row of Phoenix's spans dataframe saved as JSON Lines: ``"context.trace_id"``,
  ``"context.span_id"`` and one ``"attributes.<name>"`` key per attribute;
- OTLP JSON (``{"resourceSpans": [...]}`` per line) whose spans carry
  ``openinference.span.kind``.

Attributes may be flattened (``llm.input_messages.0.message.role``), nested
(``{"llm": {"input_messages": [{"message": {"role": ...}}]}}``) or a mix of both
(``"llm.input_messages": [{"message.role": ...}]``). An episode is one trace.
"""
from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator
from typing import Any

from tracelab.formats.base import Quarantined
from tracelab.formats.episodes import LABEL_KEYS, tool_definition
from tracelab.formats.otlp import (
    ERROR_CODES,
    hex_id,
    json_value,
    raw_spans,
    resource_spans,
    span_events,
)
from tracelab.formats.records import first_record
from tracelab.formats.source import BadJSON, Source, parse_json
from tracelab.formats.spans import (
    INFERENCE,
    TOOL,
    Span,
    SpanLineError,
    digits,
    nanos,
    parts_text,
    read_content,
    span_episodes,
)
from tracelab.formats.values import Record, RecordError, optional_string, require_list, require_object

name = "openinference"
summary = "OpenInference spans as Phoenix exports them (span JSON Lines, or OTLP JSON)"
maps = (
    "shapes: Phoenix span JSON ({context: {trace_id, span_id}, parent_id, span_kind, start_time, "
    "end_time, status_code, status_message, attributes, events}), Phoenix dataframe rows "
    "(context.trace_id, attributes.<name> keys), {data: [spans]}, or OTLP JSON with "
    "openinference.span.kind; attributes flattened, nested or mixed. episode = trace; spans "
    "ordered by start (ties: span id). LLM spans -> steps from llm.input_messages (only those "
    "beyond the previous LLM span's input + output count) and llm.output_messages "
    "(message.role, message.content or message.contents text, message.tool_calls -> tool_call, "
    "role tool + message.tool_call_id -> tool_result; legacy llm.prompts / llm.choices); "
    "llm.tools.N (tool.name, tool.description, tool.json_schema) -> definitions; llm.model_name "
    "-> model. TOOL spans -> tool_call (tool.name, tool.id, input.value as args) + tool_result "
    "at the span end (output.value; error on status ERROR, with the status message else the "
    "exception event's message); a TOOL span without tool.id records the earliest requested "
    "call of its name. agent.name -> agent; user.id -> principal.user_id; tag.tags -> tags; "
    "tracelab.case_id, else metadata.case_id (also termination, reward, ...) -> episode "
    "fields; session.id -> meta; root span ERROR -> error"
)
unknown = (
    "tool definitions when no LLM span lists llm.tools (tools_declared = false); denied calls; "
    "tool arguments when input.value is not JSON (kept as text); retriever, embedding and "
    "other span kinds (not steps); timestamps beyond the microsecond"
)

JSON_LEAVES = (
    "input.value",
    "output.value",
    "metadata",
    "tool.parameters",
    "tool.json_schema",
    "tool_call.function.arguments",
    "message.function_call_arguments_json",
    "llm.invocation_parameters",
    "llm.prompt_template.variables",
)
"""Attributes whose value is kept whole, even when an export gives it as an object."""

ATTRIBUTE_PREFIX = "attributes."
FRACTION = re.compile(r"(\.\d{6})\d+")


def claims(source: Source) -> bool:
    """A first record that is a Phoenix span, or OTLP whose spans carry OpenInference kinds."""
    record = first_record(source)
    if not isinstance(record, dict):
        return False
    if isinstance(record.get("resourceSpans"), list):
        return _has_kind(record)
    data = record.get("data")
    if isinstance(data, list) and data and not _ids(record)[0]:
        record = data[0]
    return isinstance(record, dict) and all(_ids(record)) and "start_time" in record


def episodes(source: Source) -> Iterator[tuple[int, dict[str, Any]] | Quarantined]:
    """One episode per trace, at the line of its first span."""
    return span_episodes(source, decode, locate, match_by_name=True)


def decode(record: Any, line: int) -> list[Span]:
    """The spans of one record: OTLP, a `{data: [...]}` page, or one Phoenix span."""
    return _decode(record, line, read=True)


def locate(record: Any, line: int) -> list[Span]:
    """The spans of one record with only their ids and times (their content is not read)."""
    return _decode(record, line, read=False)


def _decode(record: Any, line: int, read: bool) -> list[Span]:
    if isinstance(record, dict) and "resourceSpans" in record:
        return resource_spans(record, line, _fill_otlp if read else _unread)
    if isinstance(record, dict) and isinstance(record.get("data"), list) and not _ids(record)[0]:
        spans = record["data"]
        try:
            return [_span(span, line, f"data[{i}]", read) for i, span in enumerate(spans)]
        except RecordError as exc:
            traces = [_ids(s)[0] for s in spans if isinstance(s, dict)]
            raise SpanLineError(str(exc), _readable(traces)) from None
    try:
        return [_span(record, line, "span", read)]
    except RecordError as exc:
        trace = _ids(record)[0] if isinstance(record, dict) else None
        raise SpanLineError(str(exc), _readable([trace])) from None


def _has_kind(record: Record) -> bool:
    try:
        for _, _, raw in raw_spans(record):
            pairs = raw.get("attributes") if isinstance(raw, dict) else None
            if isinstance(pairs, list) and any(
                isinstance(p, dict) and p.get("key") == "openinference.span.kind" for p in pairs
            ):
                return True
    except RecordError:
        return False
    return False


def _ids(record: Record) -> tuple[Any, Any]:
    """A Phoenix span's ``(trace_id, span_id)`` as given (nested `context` or flat keys)."""
    context = record["context"] if isinstance(record.get("context"), dict) else {}
    return (
        context.get("trace_id", record.get("context.trace_id")),
        context.get("span_id", record.get("context.span_id")),
    )


def _readable(traces: list[Any]) -> list[str]:
    found = []
    for trace in traces:
        try:
            found.append(hex_id(trace, 16, "trace_id"))
        except RecordError:
            continue
    return found


# -- Phoenix span records ------------------------------------------------------------------


def _span(record: Any, line: int, where: str, read: bool) -> Span:
    record = require_object(record, where)
    trace_id, span_id = _ids(record)
    parent = record.get("parent_id")
    start = _time(record.get("start_time"), f"{where}.start_time")
    end = record.get("end_time")
    span = Span(
        line=line,
        trace_id=hex_id(trace_id, 16, f"{where}.context.trace_id"),
        span_id=hex_id(span_id, 8, f"{where}.context.span_id"),
        parent_id=hex_id(parent, 8, f"{where}.parent_id") if parent else None,
        start=start,
        end=start if end in (None, "") else _time(end, f"{where}.end_time"),
    )

    def content() -> None:
        attrs: Record = {}
        if record.get("attributes") is not None:
            flatten(require_object(record["attributes"], "attributes"), "", attrs)
        for key, value in record.items():
            if key.startswith(ATTRIBUTE_PREFIX):
                flatten(value, key[len(ATTRIBUTE_PREFIX):], attrs)
        events = []
        for index, event in enumerate(require_list(record.get("events") or [], "events")):
            event = require_object(event, f"events[{index}]")
            flat: Record = {}
            flatten(event.get("attributes") or {}, "", flat)
            events.append((event.get("name"), flat))
        failed = str(record.get("status_code") or "").upper() == "ERROR"
        kind = attrs.get("openinference.span.kind", record.get("span_kind"))
        _fill(span, attrs, kind, record.get("name"), failed, record.get("status_message"), events)

    if read:
        read_content(span, record, content)
    return span


def _time(value: Any, where: str) -> int:
    """Nanoseconds from an ISO-8601 string (no offset: UTC) or an epoch number of any unit."""
    if isinstance(value, str) and not value.isdigit():
        text = FRACTION.sub(r"\1", value.strip().replace("Z", "+00:00").replace("z", "+00:00"))
        try:
            stamp = dt.datetime.fromisoformat(text)
        except ValueError:
            raise RecordError(f"{where} is {value!r}, not an ISO-8601 time") from None
        if stamp.tzinfo is None:
            stamp = stamp.replace(tzinfo=dt.timezone.utc)
        epoch = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
        return (stamp - epoch) // dt.timedelta(microseconds=1) * 1000
    number = digits(value) if isinstance(value, str) else value
    if isinstance(number, float):
        value = int(number * _unit(number))
    elif isinstance(number, int) and not isinstance(number, bool):
        value = number * _unit(number)
    return nanos(value, where)


def _unit(number: float) -> int:
    """Nanoseconds per unit of an epoch number, read from its size (s, ms, µs or ns)."""
    for bound, unit in ((1e17, 1), (1e14, 1_000), (1e11, 1_000_000)):
        if abs(number) >= bound:
            return unit
    return 1_000_000_000


def flatten(value: Any, prefix: str, out: Record) -> None:
    """Nested or list-of-object attributes as flat dotted keys (``a.0.b``) in `out`.

    Depth-first in recorded order, with a stack rather than recursion: attributes may nest
    as deep as the JSON reader allows (1024 levels), beyond Python's recursion limit.
    """
    pending = [(prefix, value)]
    while pending:
        prefix, value = pending.pop()
        if _is_leaf(prefix):
            out[prefix] = value
        elif isinstance(value, dict):
            inner = [(f"{prefix}.{key}" if prefix else key, item) for key, item in value.items()]
            pending.extend(reversed(inner))
        elif isinstance(value, list) and value and all(isinstance(item, dict) for item in value):
            pending.extend(reversed([(f"{prefix}.{i}", item) for i, item in enumerate(value)]))
        else:
            out[prefix] = value


def _is_leaf(prefix: str) -> bool:
    return any(prefix == key or prefix.endswith(f".{key}") for key in JSON_LEAVES)


def indexed(flat: Record, prefix: str) -> list[Record]:
    """The list flattened under `prefix` (``prefix.N.rest``), as dicts of ``rest`` keys by N."""
    items: dict[int, Record] = {}
    head = f"{prefix}."
    for key, value in flat.items():
        if key.startswith(head):
            index, _, rest = key[len(head):].partition(".")
            position = digits(index)
            if position is not None and rest:
                items.setdefault(position, {})[rest] = value
    return [items[index] for index in sorted(items)]


# -- OTLP-shaped OpenInference spans -------------------------------------------------------


def _unread(span: Span, raw: Record, attrs: Record, resource: Record) -> None:
    """Reads nothing: an OpenInference episode is one trace, placed by ids alone."""


def _fill_otlp(span: Span, raw: Record, attrs: Record, resource: Record) -> None:
    flat: Record = {}
    flatten(attrs, "", flat)
    events = []
    for event, event_attrs in span_events(raw):
        event_flat: Record = {}
        flatten(event_attrs, "", event_flat)
        events.append((event, event_flat))
    status = raw["status"] if isinstance(raw.get("status"), dict) else {}
    failed = status.get("code") in ERROR_CODES
    if resource.get("openinference.project.name") is not None:
        span.meta["project"] = resource["openinference.project.name"]
    _fill(span, flat, None, raw.get("name"), failed, status.get("message"), events)


# -- OpenInference conventions -------------------------------------------------------------


def _fill(
    span: Span,
    attrs: Record,
    kind: Any,
    span_name: Any,
    failed: bool,
    message: Any,
    events: list[tuple[Any, Record]],
) -> None:
    kind = attrs.get("openinference.span.kind", kind)
    span.failed = failed
    if failed:
        span.error = message if isinstance(message, str) and message else _exception(events)
    _labels(span, attrs)
    if attrs.get("session.id") is not None:
        span.meta["session.id"] = attrs["session.id"]
    if kind == "LLM":
        span.role = INFERENCE
        span.model = attrs.get("llm.model_name", attrs.get("llm.request.model_name"))
        span.inputs = _messages(attrs, "llm.input_messages") or _texts(
            attrs, "llm.prompts", "prompt.text", "user"
        )
        span.outputs = _messages(attrs, "llm.output_messages") or _texts(
            attrs, "llm.choices", "completion.text", "assistant"
        )
        span.tools = _definitions(attrs)
    elif kind == "TOOL":
        span.role = TOOL
        span.tool_name = attrs.get("tool.name", span_name)
        id_key = "tool.id" if "tool.id" in attrs else "tool_call.id"
        span.call_id = optional_string(attrs.get(id_key), id_key)
        span.args = attrs.get("input.value")
        span.result = attrs.get("output.value")
        for key in ("tool.description", "tool.parameters"):
            if attrs.get(key) is not None:
                span.call_meta[key] = attrs[key]


def _exception(events: list[tuple[Any, Record]]) -> str | None:
    for event, attrs in events:
        if event == "exception" and isinstance(attrs.get("exception.message"), str):
            return attrs["exception.message"]
    return None


def _labels(span: Span, attrs: Record) -> None:
    """Episode fields: own attributes first, then the span's `metadata` object's keys."""
    own = {
        "case_id": attrs.get("tracelab.case_id"),
        "agent": attrs.get("agent.name"),
        "tags": attrs.get("tag.tags"),
        "principal": {"user_id": attrs["user.id"]} if attrs.get("user.id") is not None else None,
    }
    span.labels.update({key: value for key, value in own.items() if value is not None})
    metadata = attrs.get("metadata")
    if isinstance(metadata, str):
        try:
            metadata = parse_json(metadata)
        except BadJSON:
            metadata = None  # free text, not labels
    if isinstance(metadata, dict):
        for key in LABEL_KEYS:
            if metadata.get(key) is not None:
                span.labels.setdefault(key, metadata[key])


def _messages(attrs: Record, prefix: str) -> list[Record]:
    return [_message(m, f"{prefix}.{i}") for i, m in enumerate(indexed(attrs, prefix))]


def _message(flat: Record, where: str) -> Record:
    """One flattened OpenInference message as a GenAI message with parts."""
    parts: list[Any] = []
    contents = indexed(flat, "message.contents")
    for content in contents:
        item = {key.removeprefix("message_content."): value for key, value in content.items()}
        if item.get("type", "text") == "text" and isinstance(item.get("text"), str):
            parts.append({"type": "text", "content": item["text"]})
        else:
            parts.append(item)
    if not contents and flat.get("message.content") is not None:
        parts.append({"type": "text", "content": flat["message.content"]})
    role = flat.get("message.role")
    if role in ("tool", "function"):
        response = {"type": "tool_call_response", "id": flat.get("message.tool_call_id")}
        response.update(name=flat.get("message.name"), response=parts_text(parts, where))
        return {"role": role, "parts": [response]}
    for call in indexed(flat, "message.tool_calls"):
        parts.append(
            {
                "type": "tool_call",
                "id": call.get("tool_call.id"),
                "name": call.get("tool_call.function.name"),
                "arguments": call.get("tool_call.function.arguments"),
            }
        )
    if flat.get("message.function_call_name") is not None:
        arguments = flat.get("message.function_call_arguments_json")
        parts.append({"type": "tool_call", "name": flat["message.function_call_name"],
                      "arguments": arguments})
    return {"role": role, "parts": parts}


def _texts(attrs: Record, prefix: str, key: str, role: str) -> list[Record]:
    """Legacy completion prompts or choices (``prefix.N.key``, or a list of strings) as messages."""
    texts = attrs.get(prefix)
    if not isinstance(texts, list):
        texts = [item.get(key) for item in indexed(attrs, prefix)]
    return [
        {"role": role, "parts": [{"type": "text", "content": text}]}
        for text in texts
        if text is not None
    ]


def _definitions(attrs: Record) -> list[Record] | None:
    """`llm.tools` as native definitions; None when the span lists no tools."""
    entries = indexed(attrs, "llm.tools")
    if not entries and attrs.get("llm.tools") != []:
        return None
    return [_definition(entry, f"llm.tools.{i}") for i, entry in enumerate(entries)]


def _definition(entry: Record, where: str) -> Record:
    schema = entry.get("tool.json_schema")
    try:
        schema = json_value(schema, f"{where}.tool.json_schema")
    except RecordError:
        schema = None  # not JSON (e.g. a Python repr): the explicit name still names the tool
    schema = schema if isinstance(schema, dict) else {}
    function = schema["function"] if isinstance(schema.get("function"), dict) else schema
    name_key = "tool.name" if "tool.name" in entry else "tool.json_schema name"
    # the episode's definitions are a union by name, so a name must be a string
    name = optional_string(entry.get("tool.name", function.get("name")), f"{where}.{name_key}")
    if name is None:
        raise RecordError(f"{where}: no tool.name and no name in tool.json_schema")
    return tool_definition(
        name,
        entry.get("tool.description", function.get("description")),
        function.get("parameters", function.get("input_schema")),
        function,
        schema,
    )
