"""The steps and tool definitions of one Inspect AI sample (used by `inspect_log`).

From the `events` transcript, when the sample recorded model or tool events:

- a model event adds its input messages not seen before (system and user
  only: assistant and tool messages are the outputs and tool events already
  read), an `error` step when the call failed, and its output message as an
  assistant turn (text, then one `tool_call` per tool call);
- a tool event adds the `tool_result` of its call (and the `tool_call` too
  when no model output announced that call id);
- `error` events become `error` steps, approval events `event` steps;
- events inside a scorer span (or an old-style scorer `step`) are the
  scorer's, not the run's, and are skipped.

Else from the `messages` list, under the common rules.
"""
from __future__ import annotations

from collections.abc import Callable, Container
from datetime import datetime
from typing import Any, TypeGuard

from tracelab.formats.episodes import (
    assistant_turn,
    content_text,
    message_step,
    result_content,
    tool_call_step,
    tool_definition,
    tool_result_step,
)
from tracelab.formats.values import Record, RecordError, Step, json_text, require_list, require_object, rest

SCORER_TYPES = frozenset({"scorer", "scorers"})
DENIED_ERRORS = frozenset({"approval"})
"""Tool error types meaning the call was refused before it ran."""
INPUT_ROLES = {"system": "system", "user": "user"}
APPROVAL_KEYS = ("decision", "approver", "explanation")
MAX_NESTING = 100
"""How deep tool and subtask events may nest in each other (each level is a recursive walk)."""


def seconds(stamp: Any) -> float | None:
    """An ISO-8601 timestamp as POSIX seconds, or None when it is not one."""
    if not isinstance(stamp, str):
        return None
    try:
        return datetime.fromisoformat(stamp).timestamp()
    except ValueError:
        return None


def sample_steps(sample: Record, where: str) -> tuple[list[Step], list[Record] | None]:
    """The steps of a sample and its tool definitions (None: no model event recorded its tools)."""
    events = require_list(sample.get("events") or [], f"{where}.events")
    transcript = _Transcript(sample, where)
    if any(isinstance(e, dict) and e.get("event") in ("model", "tool") for e in events):
        transcript.walk(events)
        return transcript.steps, transcript.tools()
    messages = require_list(sample.get("messages") or [], f"{where}.messages")
    for index, message in enumerate(messages):
        transcript.message(require_object(message, f"{where}.messages[{index}]"), index)
    return transcript.steps, None


class _Transcript:
    """Steps accumulated from one sample's events or messages."""

    def __init__(self, sample: Record, where: str) -> None:
        self.where = where
        self.steps: list[Step] = []
        self.seen: set[str] = set()
        self.pending: set[str] = set()
        self.definitions: dict[str, Record] = {}
        self.declared = False
        self.depth = 0  # tool and subtask events being walked inside each other
        pool = sample.get("events_data")
        self.pool = pool.get("messages") if isinstance(pool, dict) else None
        self.handlers: dict[str, Callable[[Record], None]] = {
            "model": self._model, "tool": self._tool, "error": self._error,
            "approval": self._approval, "subtask": self._nested,
        }

    def tools(self) -> list[Record] | None:
        return list(self.definitions.values()) if self.declared else None

    # -- events -------------------------------------------------------------------------

    def walk(self, events: list[Any]) -> None:
        spans = {
            e["id"]: e for e in events
            if isinstance(e, dict) and e.get("event") == "span_begin" and isinstance(e.get("id"), str)
        }
        scorer_steps = 0
        for index, event in enumerate(events):
            event = require_object(event, f"{self.where}.events[{index}]")
            kind = event.get("event")
            if kind == "step" and _among(event.get("type"), SCORER_TYPES):
                scorer_steps = max(0, scorer_steps + (1 if event.get("action") == "begin" else -1))
            elif not scorer_steps and not _in_scorer(event, spans) and _among(kind, self.handlers):
                self.handlers[kind](event)

    def _model(self, event: Record) -> None:
        self._offered(event)
        for message in self._inputs(event):
            key = _message_key(message)
            if key in self.seen:
                continue
            self.seen.add(key)
            if _among(message.get("role"), INPUT_ROLES):
                self._add([self._input_step(message)], event.get("timestamp"))
        if event.get("error"):
            self._add([{"kind": "error", "text": str(event["error"])}], event.get("timestamp"))
        output = _output_message(event)
        if output is not None:
            self.seen.add(_message_key(output))
            turn = self._assistant(output, f"{self.where}: a model event's output")
            self.pending.update(
                s["call_id"] for s in turn
                if s["kind"] == "tool_call" and isinstance(s.get("call_id"), str)
            )
            self._add(turn, event.get("completed") or event.get("timestamp"))

    def _offered(self, event: Record) -> None:
        tools = event.get("tools")
        if not isinstance(tools, list):
            return
        self.declared = True
        for tool in tools:
            name = tool.get("name") if isinstance(tool, dict) else None
            if not isinstance(name, str):
                raise RecordError(f"{self.where}: a model event offers a tool with no name")
            if name not in self.definitions:
                self.definitions[name] = tool_definition(
                    name, tool.get("description"), tool.get("parameters"), tool
                )

    def _inputs(self, event: Record) -> list[Record]:
        """The model input; when condensed to `input_refs`, read from the sample's message pool."""
        messages = require_list(event.get("input") or [], f"{self.where}: a model event's input")
        refs = event.get("input_refs")
        if not messages and isinstance(refs, list) and isinstance(self.pool, list):
            messages = [m for ref in refs if _is_range(ref) for m in self.pool[ref[0]:ref[1]]]
        return [m for m in messages if isinstance(m, dict)]

    def _tool(self, event: Record) -> None:
        call_id = event.get("id")
        start = event.get("timestamp")
        if isinstance(call_id, str) and call_id in self.pending:
            self.pending.discard(call_id)
        else:
            call = tool_call_step(event.get("function"), call_id, event.get("arguments"))
            self._add([call], start)
        self._nested(event)
        step = _result(call_id, event.get("function"), event.get("result"), event.get("error"),
                       f"{self.where}: tool event {call_id!r}")
        if event.get("failed") is True and step["status"] == "ok":
            step["status"] = "error"
        duration = _duration_ms(event)
        if duration is not None:
            step["duration_ms"] = duration
        self._add([step], event.get("completed") or start)

    def _nested(self, event: Record) -> None:
        """Events recorded inside a tool or subtask event (logs before events were flattened)."""
        if not isinstance(event.get("events"), list):
            return
        if self.depth == MAX_NESTING:
            raise RecordError(f"{self.where}: tool and subtask events nest more than "
                              f"{MAX_NESTING} levels deep")
        self.depth += 1
        self.walk(event["events"])
        self.depth -= 1

    def _error(self, event: Record) -> None:
        error = event.get("error")
        text = error.get("message") if isinstance(error, dict) else error
        self._add([{"kind": "error", "text": text if isinstance(text, str) else None}],
                  event.get("timestamp"))

    def _approval(self, event: Record) -> None:
        call = event["call"] if isinstance(event.get("call"), dict) else {}
        data = {key: event[key] for key in APPROVAL_KEYS if event.get(key) is not None}
        data.update({key: call[key] for key in ("id", "function") if call.get(key) is not None})
        self._add([{"kind": "event", "name": "approval", "data": data}], event.get("timestamp"))

    # -- messages -----------------------------------------------------------------------

    def message(self, message: Record, index: int) -> None:
        role = message.get("role")
        where = f"{self.where}.messages[{index}]"
        if _among(role, INPUT_ROLES):
            self._add([self._input_step(message)])
        elif role == "assistant":
            self._add(self._assistant(message, where))
        elif role == "tool":
            error = message.get("error")
            self._add([_result(message.get("tool_call_id"), message.get("function"),
                               message.get("content"), error, where)])
        else:
            raise RecordError(
                f"{where}: unknown role {role!r} (expected system, user, assistant or tool)"
            )

    def _input_step(self, message: Record) -> Step:
        text, parts = content_text(message.get("content"), self.where)
        role = INPUT_ROLES[message["role"]]
        return message_step(role, text, parts, rest(message, ("role", "content")))

    def _assistant(self, message: Record, where: str) -> list[Step]:
        text, parts = content_text(message.get("content"), f"{where} content")
        calls = message.get("tool_calls") or []
        steps = [
            tool_call_step(call.get("function"), call.get("id"), call.get("arguments"),
                           rest(call, ("id", "function", "arguments", "type", "view")))
            for call in (
                require_object(c, f"{where}.tool_calls[{i}]")
                for i, c in enumerate(require_list(calls, f"{where}.tool_calls"))
            )
        ]
        return assistant_turn(text, parts, rest(message, ("role", "content", "tool_calls")), steps)

    def _add(self, steps: list[Step], stamp: Any = None) -> None:
        for step in steps:
            if isinstance(stamp, str):
                step["ts"] = stamp
            self.steps.append(step)


def _result(call_id: Any, function: Any, value: Any, error: Any, where: str) -> Step:
    """A tool result; an error of type `approval` means the call was refused (`denied`)."""
    text, result, parts = result_content(value, where)
    details = error if isinstance(error, dict) else {}
    message = details.get("message") if details else error
    step = tool_result_step(call_id, function, text, error is not None, message, parts, result)
    if _among(details.get("type"), DENIED_ERRORS):
        step["status"] = "denied"
    if details.get("type") is not None:
        step.setdefault("meta", {})["error_type"] = details["type"]
    return step


def _duration_ms(event: Record) -> float | None:
    start, end = seconds(event.get("timestamp")), seconds(event.get("completed"))
    if start is not None and end is not None:
        return round((end - start) * 1000, 3)
    working = event.get("working_time")
    return working * 1000 if isinstance(working, (int, float)) else None


def _output_message(event: Record) -> Record | None:
    """The message of a model event's first choice, when it recorded one."""
    output = event.get("output")
    choices = output.get("choices") if isinstance(output, dict) else None
    first = choices[0] if isinstance(choices, list) and choices else None
    message = first.get("message") if isinstance(first, dict) else None
    return message if isinstance(message, dict) else None


def _among(value: Any, names: Container[str]) -> TypeGuard[str]:
    """`value` is a string in `names` (recorded values may be any JSON, lists included)."""
    return isinstance(value, str) and value in names


def _is_range(ref: Any) -> bool:
    """A pool reference ``[start, end_exclusive]``."""
    return (isinstance(ref, list) and len(ref) == 2
            and all(isinstance(i, int) and not isinstance(i, bool) for i in ref))


def _in_scorer(event: Record, spans: dict[Any, Record]) -> bool:
    """True when the event's span, or one of its ancestors, is a scorer's."""
    span_id = event.get("span_id")
    visited = set()
    while isinstance(span_id, str) and span_id not in visited:
        visited.add(span_id)
        span = spans.get(span_id)
        if span is None:
            return False
        if _among(span.get("type"), SCORER_TYPES):
            return True
        span_id = span.get("parent_id")
    return False


def _message_key(message: Record) -> str:
    """A message's identity: its id, else its role, content and tool calls (old logs lack ids)."""
    if message.get("id"):
        return f"id:{message['id']}"
    parts = [message.get(k) for k in ("role", "content", "tool_calls", "tool_call_id")]
    return json_text(parts, sort_keys=True)
