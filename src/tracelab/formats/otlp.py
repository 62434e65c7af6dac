"""OpenTelemetry OTLP JSON with the GenAI semantic conventions (`otlp`, docs/formats.md).

The OTLP file exporter's JSON Lines: each line is one ``{"resourceSpans": [...]}``
export batch; a `.json` file holds one such document. The spans of one episode
may be spread over several lines; `spans` groups and orders them.
"""
from __future__ import annotations

import base64
import binascii
import math
import string
from collections.abc import Callable, Iterator
from typing import Any

from tracelab.formats.base import Quarantined
from tracelab.formats.episodes import content_text, tool_definition
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
from tracelab.formats.values import Record, RecordError, json_text, optional_string, require_list, require_object

name = "otlp"
summary = "OpenTelemetry OTLP JSON Lines ({resourceSpans} per line) with GenAI semantic conventions"
maps = (
    "episode = spans sharing gen_ai.conversation.id, else one traceId (ids stored as lowercase "
    "hex, from hex or base64); spans ordered by startTimeUnixNano (ties: span id). "
    "execute_tool spans -> tool_call (gen_ai.tool.name, gen_ai.tool.call.id, "
    "gen_ai.tool.call.arguments) + tool_result at the span end (gen_ai.tool.call.result: a "
    "string -> text, structured -> result; error on status code 2 or error.type, with the "
    "status message else error.type). chat / generate_content / text_completion spans -> "
    "steps from gen_ai.input.messages (only those beyond the previous span's input + output "
    "count), gen_ai.output.messages and gen_ai.system_instructions, or the older span events "
    "gen_ai.{system,user,assistant,tool}.message and gen_ai.choice; tool_call / "
    "tool_call_response parts only when no execute_tool span has their call id. "
    "gen_ai.tool.definitions (any span, union by name; [] declares none). case_id: "
    "tracelab.case_id (span or resource); agent, agent_version: gen_ai.agent.name/version; "
    "model: first inference span's gen_ai.request.model; started_at/ended_at: span times; "
    "error: root span's status message when ERROR; meta: service.name, trace_ids"
)
unknown = (
    "tool definitions when no span carries gen_ai.tool.definitions (tools_declared = false); "
    "denied calls (no such status); termination, reward, principal and tags; message content "
    "when the instrumentation did not capture it; Traceloop-style gen_ai.prompt.N.* attributes"
)

INFERENCE_OPERATIONS = frozenset({"chat", "generate_content", "text_completion"})
LEGACY_INPUT_EVENTS = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}
DETAILS_EVENT = "gen_ai.client.inference.operation.details"
ERROR_CODES = (2, "2", "STATUS_CODE_ERROR")
HEX = frozenset(string.hexdigits)

Filler = Callable[[Span, Record, Record, Record], None]
"""``fill(span, raw_span, attributes, resource_attributes)``: a span's content, by convention."""


def claims(source: Source) -> bool:
    """A first record holding a `resourceSpans` list."""
    record = first_record(source)
    return isinstance(record, dict) and isinstance(record.get("resourceSpans"), list)


def episodes(source: Source) -> Iterator[tuple[int, dict[str, Any]] | Quarantined]:
    """One episode per conversation (else trace), at the line of its first span."""
    return span_episodes(source, decode, locate, match_by_name=False)


def decode(record: Any, line: int) -> list[Span]:
    """The GenAI spans of one OTLP record."""
    return resource_spans(record, line, _fill)


def locate(record: Any, line: int) -> list[Span]:
    """The spans of one OTLP record with only their ids, times and conversation id."""
    return resource_spans(record, line, _conversation)


# -- OTLP JSON structure -------------------------------------------------------------------


def resource_spans(record: Any, line: int, fill: Filler) -> list[Span]:
    """Every span of an OTLP export record, its content read by ``fill``.

    Raises:
        SpanLineError: the record is not OTLP, or a span's ids or times cannot be read.
    """
    if not isinstance(record, dict) or not isinstance(record.get("resourceSpans"), list):
        raise RecordError("not an OTLP record: expected an object with a resourceSpans list")
    try:
        return list(_spans(record, line, fill))
    except RecordError as exc:
        raise SpanLineError(str(exc), _trace_ids(record)) from None


def raw_spans(record: Record) -> Iterator[tuple[str, Any, Any]]:
    """``(where, resource, span)`` for every span object of an OTLP record."""
    for r_index, batch in enumerate(require_list(record["resourceSpans"], "resourceSpans")):
        at = f"resourceSpans[{r_index}]"
        batch = require_object(batch, at)
        scopes = batch.get("scopeSpans", batch.get("instrumentationLibrarySpans")) or []
        for s_index, scope in enumerate(require_list(scopes, f"{at}.scopeSpans")):
            scope = require_object(scope, f"{at}.scopeSpans[{s_index}]")
            spans = require_list(scope.get("spans") or [], f"{at}.scopeSpans[{s_index}].spans")
            for index, span in enumerate(spans):
                yield f"{at}.scopeSpans[{s_index}].spans[{index}]", batch.get("resource"), span


def _spans(record: Record, line: int, fill: Filler) -> Iterator[Span]:
    resources: dict[int, Record] = {}
    for where, resource, raw in raw_spans(record):
        if id(resource) not in resources:
            holder = resource if isinstance(resource, dict) else {}
            resources[id(resource)] = attributes(holder.get("attributes"), f"{where}: resource")
        yield _span(require_object(raw, where), resources[id(resource)], line, where, fill)


def _span(raw: Record, resource: Record, line: int, where: str, fill: Filler) -> Span:
    parent = raw.get("parentSpanId")
    start = nanos(raw.get("startTimeUnixNano"), f"{where}.startTimeUnixNano")
    end = raw.get("endTimeUnixNano")
    span = Span(
        line=line,
        trace_id=hex_id(raw.get("traceId"), 16, f"{where}.traceId"),
        span_id=hex_id(raw.get("spanId"), 8, f"{where}.spanId"),
        parent_id=hex_id(parent, 8, f"{where}.parentSpanId") if parent else None,
        start=start,
        end=start if end in (None, "", 0, "0") else nanos(end, f"{where}.endTimeUnixNano"),
    )

    def content() -> None:
        fill(span, raw, attributes(raw.get("attributes"), "attributes"), resource)

    read_content(span, raw, content)
    return span


def _trace_ids(record: Record) -> list[str]:
    """The trace ids a broken record names, as far as they can be read."""
    found = []
    try:
        for where, _, raw in raw_spans(record):
            try:
                found.append(hex_id(raw.get("traceId"), 16, where))
            except (RecordError, AttributeError):
                continue
    except RecordError:
        pass
    return found


def hex_id(value: Any, size: int, where: str) -> str:
    """A trace or span id of `size` bytes, given in hex or base64, as lowercase hex."""
    if isinstance(value, str):
        if len(value) == 2 * size and HEX.issuperset(value):
            return value.lower()
        try:
            decoded = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            decoded = b""
        if len(decoded) == size:
            return decoded.hex()
    raise RecordError(
        f"{where} is {value!r}: expected {2 * size} hex digits or the base64 of {size} bytes"
    )


def attributes(pairs: Any, where: str) -> Record:
    """OTLP ``[{key, value}]`` as a dict of JSON values (a repeated key: the last wins)."""
    if pairs is None:
        return {}
    decoded: Record = {}
    for index, pair in enumerate(require_list(pairs, where)):
        pair = require_object(pair, f"{where}[{index}]")
        key = pair.get("key")
        if not isinstance(key, str):
            raise RecordError(f"{where}[{index}] has no string key")
        decoded[key] = any_value(pair.get("value"), f"{where}[{key!r}]")
    return decoded


def any_value(value: Any, where: str) -> Any:
    """An OTLP AnyValue as a JSON value (intValue given as a string becomes an integer)."""
    if value is None or value == {}:
        return None
    value = require_object(value, where)
    if "stringValue" in value:
        return _typed(value["stringValue"], str, where)
    if "boolValue" in value:
        return _typed(value["boolValue"], bool, where)
    if "intValue" in value:
        return _integer(value["intValue"], where)
    if "doubleValue" in value:
        return _double(value["doubleValue"], where)
    if "arrayValue" in value:
        items = require_object(value["arrayValue"], where).get("values") or []
        items = require_list(items, where)
        return [any_value(item, f"{where}[{i}]") for i, item in enumerate(items)]
    if "kvlistValue" in value:
        pairs = require_object(value["kvlistValue"], where).get("values") or []
        return attributes(pairs, where)
    if "bytesValue" in value:
        return _typed(value["bytesValue"], str, where)
    raise RecordError(f"{where}: unknown OTLP value {sorted(value)}")


def _typed(value: Any, kind: type, where: str) -> Any:
    if not isinstance(value, kind):
        raise RecordError(f"{where} is {value!r}, not a {kind.__name__}")
    return value


def _integer(value: Any, where: str) -> int:
    if isinstance(value, str):
        number = digits(value.removeprefix("-"))
        if number is not None:
            return -number if value.startswith("-") else number
    elif isinstance(value, int) and not isinstance(value, bool):
        return value
    raise RecordError(f"{where}: intValue {value!r} is not an integer")


def _double(value: Any, where: str) -> float | str:
    """A doubleValue; NaN and the infinities (not JSON numbers) stay as their text."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            number = None
        if number is not None:
            return number if math.isfinite(number) else value
    raise RecordError(f"{where}: doubleValue {value!r} is not a number")


def json_value(value: Any, where: str) -> Any:
    """A value that may be given as a JSON string (message lists, definitions), parsed."""
    if not isinstance(value, str):
        return value
    try:
        return parse_json(value)
    except BadJSON as exc:
        raise RecordError(f"{where} is a string that is not JSON ({exc})") from None


# -- GenAI conventions ---------------------------------------------------------------------


def _conversation(span: Span, raw: Record, attrs: Record, resource: Record) -> None:
    conversation = attrs.get("gen_ai.conversation.id")
    span.conversation_id = _text(conversation) if conversation not in (None, "") else None


def _fill(span: Span, raw: Record, attrs: Record, resource: Record) -> None:
    _conversation(span, raw, attrs, resource)
    status = raw["status"] if isinstance(raw.get("status"), dict) else {}
    error_type = attrs.get("error.type")
    span.failed = status.get("code") in ERROR_CODES or error_type is not None
    if span.failed:
        message = status.get("message")
        if isinstance(message, str) and message:
            span.error = message
        elif error_type is not None:
            span.error = _text(error_type)
    case_id = attrs.get("tracelab.case_id", resource.get("tracelab.case_id"))
    for label, value in (
        ("case_id", case_id),
        ("agent", attrs.get("gen_ai.agent.name")),
        ("agent_version", attrs.get("gen_ai.agent.version")),
    ):
        if value is not None:
            span.labels[label] = value
    if resource.get("service.name") is not None:
        span.meta["service.name"] = resource["service.name"]
    if "gen_ai.tool.definitions" in attrs:
        span.tools = definitions(attrs["gen_ai.tool.definitions"], "gen_ai.tool.definitions")
    operation = optional_string(attrs.get("gen_ai.operation.name"), "gen_ai.operation.name")
    if operation == "execute_tool":
        span.role = TOOL
        span.tool_name = attrs.get("gen_ai.tool.name")
        span.call_id = optional_string(attrs.get("gen_ai.tool.call.id"), "gen_ai.tool.call.id")
        span.args = attrs.get("gen_ai.tool.call.arguments")
        span.result = attrs.get("gen_ai.tool.call.result")
    elif operation in INFERENCE_OPERATIONS:
        span.role = INFERENCE
        span.model = attrs.get("gen_ai.request.model")
        _messages(span, raw, attrs)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json_text(value)


def _messages(span: Span, raw: Record, attrs: Record) -> None:
    """Input, output and system messages: attributes first, else the span's events."""
    events = span_events(raw)
    details = next((a for n, a in events if n == DETAILS_EVENT), {})
    found = {**details, **{k: v for k, v in attrs.items() if v is not None}}
    system = found.get("gen_ai.system_instructions")
    span.system = parts_text(json_value(system, "gen_ai.system_instructions"), "instructions")
    for key, target in (
        ("gen_ai.input.messages", span.inputs),
        ("gen_ai.output.messages", span.outputs),
    ):
        if key in found:
            target.extend(require_list(json_value(found[key], key), key))
    if "gen_ai.input.messages" not in found:
        for event, event_attrs in events:
            if event in LEGACY_INPUT_EVENTS:
                where = f"event {event}"
                body = _body(event_attrs, where)
                span.inputs.append(_legacy(LEGACY_INPUT_EVENTS[event], body, where))
    if "gen_ai.output.messages" not in found:
        for event, event_attrs in events:
            if event == "gen_ai.choice":
                where = "event gen_ai.choice"
                body = _body(event_attrs, where)
                message = body.get("message", body)
                span.outputs.append(_legacy("assistant", require_object(message, where), where))


def span_events(raw: Record) -> list[tuple[str | None, Record]]:
    """``(name, attributes)`` of an OTLP span's events."""
    events = raw.get("events") or []
    decoded = []
    for index, event in enumerate(require_list(events, "events")):
        event = require_object(event, f"events[{index}]")
        name = optional_string(event.get("name"), f"events[{index}].name")
        decoded.append((name, attributes(event.get("attributes"), f"events[{index}]")))
    return decoded


def _body(attrs: Record, where: str) -> Record:
    """An older GenAI event's body: `gen_ai.event.content` (JSON), else its own attributes."""
    if "gen_ai.event.content" in attrs:
        return require_object(json_value(attrs["gen_ai.event.content"], where), where)
    return attrs


def _legacy(role: str, body: Record, where: str) -> Record:
    """An older-convention message body (`content`, `tool_calls`, `id`) as a GenAI message."""
    if role == "tool":
        response = {"type": "tool_call_response", "id": body.get("id")}
        return {"role": "tool", "parts": [{**response, "response": body.get("content")}]}
    text, others = content_text(body.get("content"), where)
    parts: list[Any] = [{"type": "text", "content": text}] if text is not None else []
    parts.extend(others)
    for index, call in enumerate(require_list(body.get("tool_calls") or [], f"{where}.tool_calls")):
        call = require_object(call, f"{where}.tool_calls[{index}]")
        function = call["function"] if isinstance(call.get("function"), dict) else call
        parts.append(
            {
                "type": "tool_call",
                "id": call.get("id"),
                "name": function.get("name"),
                "arguments": function.get("arguments"),
            }
        )
    return {"role": role, "parts": parts}


def definitions(value: Any, where: str) -> list[Record]:
    """GenAI tool definitions (flat, or OpenAI's nested `function`) as native definitions."""
    tools = require_list(json_value(value, where), where)
    native = []
    for index, tool in enumerate(tools):
        tool = require_object(tool, f"{where}[{index}]")
        nested = isinstance(tool.get("function"), dict)
        function = tool["function"] if nested else tool
        # the episode's definitions are a union by name, so a name must be a string
        name_key = f"{where}[{index}]{'.function' if nested else ''}.name"
        native.append(
            tool_definition(
                optional_string(function.get("name"), name_key),
                function.get("description"),
                function.get("parameters"),
                function,
                tool,
            )
        )
    return native
