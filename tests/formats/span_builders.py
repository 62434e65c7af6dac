"""Small builders of OTLP JSON records and GenAI messages, for the span-format tests."""
from __future__ import annotations

import json
from typing import Any

T0_MS = 1_772_442_900_000  # 2026-03-02T09:15:00Z
TRACE = "5b8efff798038103d269b633813fc60c"
ROOT = "00f067aa0ba902b7"


def value(v: Any) -> dict[str, Any]:
    """A JSON value as an OTLP AnyValue, written the way the OTLP file exporter writes it."""
    if v is None:
        return {}
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    if isinstance(v, float):
        return {"doubleValue": v}
    if isinstance(v, str):
        return {"stringValue": v}
    if isinstance(v, list):
        return {"arrayValue": {"values": [value(i) for i in v]}}
    return {"kvlistValue": {"values": attrs(v)}}


def attrs(mapping: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"key": k, "value": value(v)} for k, v in mapping.items()]


def span(span_id: str, start_ms: int, end_ms: int, attributes: dict[str, Any], *,
         trace: str = TRACE, parent: str | None = ROOT, status: dict | None = None,
         events: list | None = None, name: str = "span") -> dict[str, Any]:
    """One OTLP span; times in milliseconds after 2026-03-02T09:15:00Z."""
    out: dict[str, Any] = {
        "traceId": trace, "spanId": span_id, "name": name,
        "startTimeUnixNano": str((T0_MS + start_ms) * 1_000_000),
        "endTimeUnixNano": str((T0_MS + end_ms) * 1_000_000),
        "attributes": attrs(attributes),
    }
    if parent:
        out["parentSpanId"] = parent
    if status:
        out["status"] = status
    if events:
        out["events"] = events
    return out


def record(*spans: dict[str, Any], resource: dict[str, Any] | None = None) -> dict[str, Any]:
    """One OTLP export batch (one line of the file exporter's output)."""
    return {"resourceSpans": [{"resource": {"attributes": attrs(resource or {})},
                               "scopeSpans": [{"scope": {"name": "test"}, "spans": list(spans)}]}]}


def event(name: str, body: dict[str, Any]) -> dict[str, Any]:
    """An older-convention GenAI span event, its body in `gen_ai.event.content`."""
    return {"name": name, "timeUnixNano": "1",
            "attributes": attrs({"gen_ai.event.content": json.dumps(body)})}


def chat(span_id: str, start_ms: int, end_ms: int, inputs: list | None, outputs: list | None,
         **extra: Any) -> dict[str, Any]:
    """A `chat` inference span with its messages as JSON strings (the usual span encoding)."""
    attributes: dict[str, Any] = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o"}
    if inputs is not None:
        attributes["gen_ai.input.messages"] = json.dumps(inputs)
    if outputs is not None:
        attributes["gen_ai.output.messages"] = json.dumps(outputs)
    attributes.update(extra.pop("attributes", {}))
    return span(span_id, start_ms, end_ms, attributes, name="chat gpt-4o", **extra)


def tool(span_id: str, start_ms: int, end_ms: int, name: str, call_id: str | None,
         args: Any = None, result: Any = None, **extra: Any) -> dict[str, Any]:
    """An `execute_tool` span."""
    attributes: dict[str, Any] = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name}
    for key, val in (("gen_ai.tool.call.id", call_id), ("gen_ai.tool.call.arguments", args),
                     ("gen_ai.tool.call.result", result)):
        if val is not None:
            attributes[key] = val
    attributes.update(extra.pop("attributes", {}))
    return span(span_id, start_ms, end_ms, attributes, name=f"execute_tool {name}", **extra)


def said(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": text}]}


def calls(*parts: tuple[str, str, Any], text: str | None = None) -> dict[str, Any]:
    """An assistant message: optional text, then tool_call parts ``(id, name, arguments)``."""
    content = [{"type": "text", "content": text}] if text else []
    content += [{"type": "tool_call", "id": i, "name": n, "arguments": a} for i, n, a in parts]
    return {"role": "assistant", "parts": content}


def responds(call_id: str, response: Any) -> dict[str, Any]:
    return {"role": "tool", "parts": [{"type": "tool_call_response", "id": call_id,
                                       "response": response}]}


def bare(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Steps without their `ts`, `duration_ms` and `meta` (checked by dedicated tests)."""
    return [{k: v for k, v in s.items() if k not in ("ts", "duration_ms", "meta")} for s in steps]
