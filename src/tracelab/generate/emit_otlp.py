"""Native episodes as OTLP JSON with the newer GenAI conventions (`tracelab generate --as otlp`).

Each episode becomes one OTLP export record (one JSON line): an `invoke_agent`
root span, one `chat` span per assistant turn (`gen_ai.input.messages` holding
the history so far, `gen_ai.output.messages` the turn), and one `execute_tool`
span per call that has a result. Ingesting the output with the `otlp` format
gives back the episode's calls with the same names, arguments and statuses,
with two exceptions the conventions cannot express: a `denied` result comes
back as `error` (with ``error.type = "denied"``), and a call's step-level
`effect` is dropped. Steps other than messages, calls and results
(confirmation, retrieval, budget, error, event) have no GenAI form and are
dropped; so are `termination`, `reward`, `principal`, `tags` and `meta`.
"""
from __future__ import annotations

import datetime as dt
import hashlib
from typing import Any

import orjson

from tracelab.ingest.pairing import pair_steps

BASE_NS = 1_767_225_600 * 10**9
"""2026-01-01T00:00:00Z: the start of an episode that records no valid `started_at`."""
SLOT_NS = 2_000_000  # each step gets its own 2 ms slot, so span order is step order
MESSAGE_ROLES = ("system", "user")
ROOT_SPAN_ID = f"{1:016x}"

Record = dict[str, Any]


def to_otlp(episode: Record) -> Record:
    """One native episode as an OTLP export record ``{"resourceSpans": [...]}``."""
    return _Emitter(episode).record()


def any_value(value: Any) -> Record:
    """A JSON value as an OTLP AnyValue (integers as strings, as OTLP JSON writes them)."""
    if value is None:
        return {}
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, str):
        return {"stringValue": value}
    if isinstance(value, list):
        return {"arrayValue": {"values": [any_value(item) for item in value]}}
    return {"kvlistValue": {"values": _pairs(value)}}


def _pairs(attrs: Record) -> list[Record]:
    return [{"key": key, "value": any_value(value)} for key, value in attrs.items() if value is not None]


def _json_text(value: Any) -> str:
    return value if isinstance(value, str) else orjson.dumps(value).decode()


class _Emitter:
    """Builds the spans of one episode, walking its steps once."""

    def __init__(self, episode: Record) -> None:
        self.episode = episode
        self.steps = [s for s in episode.get("steps") or [] if isinstance(s, dict)]
        episode_id = str(episode.get("episode_id", ""))
        self.trace_id = hashlib.sha256(episode_id.encode()).hexdigest()[:32]
        started = _nanos(episode.get("started_at"))
        self.base = BASE_NS if started is None else started
        calls_results = [
            (i, s["kind"], s.get("name"), s.get("call_id") or None)
            for i, s in enumerate(self.steps)
            if s.get("kind") in ("tool_call", "tool_result")
        ]
        self.result_of = dict(pair_steps(calls_results))
        self.call_of = {result: call for call, result in self.result_of.items()}
        # Ids the execute_tool spans carry: a reader skips message parts with these ids.
        self.span_ids = {self.steps[c].get("call_id") for c in self.result_of} - {None, ""}
        self.spans: list[Record] = []
        self.history: list[Record] = []
        self.unsent = False  # history holds messages no chat span has carried yet
        self.count = 1  # span ids: the root is 1, the others count up from 2

    def record(self) -> Record:
        index = 0
        while index < len(self.steps):
            index = self._step(index)
        if self.unsent:
            self._chat(len(self.steps), [])
        self.spans.insert(0, self._root())
        resource = {"service.name": self.episode.get("agent") or "tracelab",
                    "tracelab.case_id": self.episode.get("case_id")}
        scope = {"scope": {"name": "tracelab.emit_otlp"}, "spans": self.spans}
        return {"resourceSpans": [{"resource": {"attributes": _pairs(resource)},
                                   "scopeSpans": [scope]}]}

    def _time(self, index: int) -> int:
        return self.base + (index + 1) * SLOT_NS

    def _span_id(self) -> str:
        self.count += 1
        return f"{self.count:016x}"

    def _span(self, name: str, start: int, end: int, attrs: Record, status: Record | None = None) -> None:
        span = {
            "traceId": self.trace_id,
            "spanId": self._span_id(),
            "parentSpanId": ROOT_SPAN_ID,
            "name": name,
            "kind": 1,
            "startTimeUnixNano": str(start),
            "endTimeUnixNano": str(end),
            "attributes": _pairs(attrs),
        }
        if status:
            span["status"] = status
        self.spans.append(span)

    def _step(self, index: int) -> int:
        """Emit what starts at step `index`; the index of the next unhandled step."""
        step = self.steps[index]
        kind = step.get("kind")
        if kind in MESSAGE_ROLES:
            self._remember({"role": kind, "parts": _text_parts(step.get("text"))}, visible=True)
        elif kind in ("assistant", "tool_call"):
            return self._turn(index)
        elif kind == "tool_result" and index in self.call_of:
            call = self.steps[self.call_of[index]]
            if call.get("call_id"):
                self._remember(_response_message(call.get("call_id"), step), visible=False)
        elif kind == "tool_result":
            self._remember(_response_message(self._part_id(step), step), visible=True)
        return index + 1

    def _part_id(self, step: Record) -> Any:
        """The id of a part no span records: dropped when a span carries the same (reused) id."""
        call_id = step.get("call_id")
        return None if call_id in self.span_ids else call_id or None

    def _remember(self, message: Record, visible: bool) -> None:
        self.history.append(message)
        self.unsent = self.unsent or visible

    def _turn(self, start: int) -> int:
        """An assistant turn (its text, then its calls): chat spans and tool spans.

        A call with a result is recorded by its own execute_tool span (its message
        part is kept only when a call id lets the reader match the two); a call
        without one only by a tool_call part. Parts become steps at their chat
        span's start, so a result-less call that follows a recorded call gets a
        chat span of its own, at its own time, to keep the calls in order.
        """
        index = start
        parts: list[Record] = []
        if self.steps[index].get("kind") == "assistant":
            parts.extend(_text_parts(self.steps[index].get("text")))
            index += 1
        calls = []
        slot, after_recorded = start, False
        while index < len(self.steps) and self.steps[index].get("kind") == "tool_call":
            step, recorded = self.steps[index], index in self.result_of
            if not recorded and after_recorded:
                self._chat(slot, parts)
                slot, parts, after_recorded = index, [], False
            after_recorded = after_recorded or recorded
            if not recorded or step.get("call_id"):
                call_id = step.get("call_id") if recorded else self._part_id(step)
                parts.append({"type": "tool_call", "id": call_id,
                              "name": step.get("name"), "arguments": _arguments(step.get("args"))})
            calls.append(index)
            index += 1
        self._chat(slot, parts)
        for call in calls:
            if call in self.result_of:
                self._tool(call, self.result_of[call])
        return index

    def _chat(self, index: int, parts: list[Record]) -> None:
        """A chat span at step `index`'s time: the history in, one assistant message of `parts` out."""
        outputs = [{"role": "assistant", "parts": parts}] if parts else []
        attrs = {
            "gen_ai.operation.name": "chat",
            "gen_ai.conversation.id": self.episode.get("episode_id"),
            "gen_ai.request.model": self.episode.get("model"),
            "gen_ai.input.messages": orjson.dumps(self.history).decode(),
            "gen_ai.output.messages": orjson.dumps(outputs).decode() if outputs else None,
        }
        start = self._time(index) - SLOT_NS // 2
        self._span(f"chat {self.episode.get('model') or ''}".strip(), start, self._time(index), attrs)
        self.history.extend(outputs)
        self.unsent = False

    def _tool(self, call_index: int, result_index: int) -> None:
        call, result = self.steps[call_index], self.steps[result_index]
        status = _status(result)
        content = result.get("text", result.get("result"))
        attrs = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call.get("name"),
            "gen_ai.tool.call.id": call.get("call_id") or None,
            "gen_ai.tool.call.arguments": _json_text(call["args"]) if call.get("args") is not None else None,
            "gen_ai.tool.call.result": content,
            "error.type": "denied" if status == "denied" else None,
        }
        failed = None
        if status != "ok":
            failed = {"code": 2, "message": result["error"]} if result.get("error") else {"code": 2}
        self._span(f"execute_tool {call.get('name') or ''}".strip(), self._time(call_index),
                   self._time(result_index), attrs, failed)

    def _root(self) -> Record:
        ep = self.episode
        end = max([self._time(len(self.steps))] + [int(s["endTimeUnixNano"]) for s in self.spans])
        end = max(end, _nanos(ep.get("ended_at")) or 0)
        tools = ep.get("tools")
        attrs = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": ep.get("agent"),
            "gen_ai.agent.version": ep.get("agent_version"),
            "gen_ai.conversation.id": ep.get("episode_id"),
            "gen_ai.tool.definitions": orjson.dumps([_definition(t) for t in tools]).decode()
            if isinstance(tools, list) else None,
        }
        root = {
            "traceId": self.trace_id,
            "spanId": ROOT_SPAN_ID,
            "name": f"invoke_agent {ep.get('agent') or ''}".strip(),
            "kind": 1,
            "startTimeUnixNano": str(self.base),
            "endTimeUnixNano": str(end),
            "attributes": _pairs(attrs),
        }
        if ep.get("error"):
            root["status"] = {"code": 2, "message": ep["error"]}
        return root


def _text_parts(text: Any) -> list[Record]:
    return [{"type": "text", "content": text}] if isinstance(text, str) else []


def _arguments(args: Any) -> Any:
    """Arguments as a message part holds them: an object (a JSON string parsed when it can be)."""
    if isinstance(args, str):
        try:
            return orjson.loads(args)
        except orjson.JSONDecodeError:
            return args
    return args


def _response_message(call_id: Any, result: Record) -> Record:
    response = result.get("text", result.get("result"))
    return {"role": "tool", "parts": [{"type": "tool_call_response", "id": call_id or None,
                                       "response": response}]}


def _status(result: Record) -> str:
    """A result's status by docs/trace-format.md §2: `status`, else `error` when `is_error`, else ok."""
    if result.get("status"):
        return str(result["status"])
    return "error" if result.get("is_error") is True else "ok"


def _definition(tool: Any) -> Record:
    tool = tool if isinstance(tool, dict) else {}
    definition = {"type": "function", "name": tool.get("name"),
                  "description": tool.get("description"), "parameters": tool.get("parameters"),
                  "x-effect": tool.get("effect")}
    return {key: value for key, value in definition.items() if value is not None}


def _nanos(value: Any) -> int | None:
    """Nanoseconds of an ISO-8601 time, or None when it is absent or unreadable."""
    if not isinstance(value, str):
        return None
    try:
        stamp = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=dt.timezone.utc)
    return (stamp - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)) // dt.timedelta(
        microseconds=1
    ) * 1000
