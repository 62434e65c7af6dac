"""What LangSmith and Langfuse exports share: model messages as instrumentations record them,
and the rule that a tool run is the record of the call a model asked for.

Trace stores keep a model call's `input` and `output` as the instrumented library passed
them: OpenAI-style ``{role, content, tool_calls}`` dicts, LangChain dumps ``{type: human |
ai | system | tool, content, tool_calls}``, or LangChain's serialized constructors ``{lc,
type: constructor, id: [..., "HumanMessage"], kwargs: {...}}``. `message` reads all three.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tracelab.formats.episodes import content_text, message_step, tool_call_step
from tracelab.formats.values import Record, Step

ROLES = {
    "user": "user", "human": "user", "HumanMessage": "user",
    "assistant": "assistant", "ai": "assistant", "AIMessage": "assistant",
    "AIMessageChunk": "assistant",
    "system": "system", "developer": "system", "SystemMessage": "system",
    "tool": "tool", "function": "tool", "ToolMessage": "tool", "FunctionMessage": "tool",
}
"""Message roles as each library spells them, to user / assistant / system / tool."""


@dataclass
class Message:
    """One model message: its role, text, non-text parts and the tool calls it asks for."""

    role: str
    text: str | None
    parts: list[Any]
    calls: list[Record] = field(default_factory=list)


def message(value: Any) -> Message | None:
    """A message in any of the three shapes, or a plain string (a user text); else None."""
    if isinstance(value, str):
        return Message("user", value, [])
    if not isinstance(value, dict):
        return None
    body = value
    role = value.get("role", value.get("type"))
    if value.get("lc") is not None and isinstance(value.get("kwargs"), dict):
        body = value["kwargs"]
        kind = value.get("id")
        role = kind[-1] if isinstance(kind, list) and kind else body.get("type")
    role = ROLES.get(role) if isinstance(role, str) else None
    if role is None:
        return None
    try:
        text, parts = content_text(body.get("content"), "content")
    except ValueError:
        text, parts = None, [body.get("content")]
    calls = _calls(body.get("tool_calls"))
    if not calls and isinstance(body.get("additional_kwargs"), dict):
        calls = _calls(body["additional_kwargs"].get("tool_calls"))
    return Message(role, text, parts, calls)


def _calls(value: Any) -> list[Record]:
    """The tool calls of a message's `tool_calls`: the objects of a list (anything else holds none)."""
    return [_call(c) for c in value if isinstance(c, dict)] if isinstance(value, list) else []


def messages(value: Any) -> list[Message]:
    """The messages of a list (LangChain batches nest one list per prompt: the first is read)."""
    if isinstance(value, list) and value and isinstance(value[0], list):
        value = value[0]
    if not isinstance(value, list):
        return []
    return [m for m in map(message, value) if m is not None]


def _call(call: Record) -> Record:
    """``{name, id, args}`` of an OpenAI ``{id, function: {name, arguments}}`` or LangChain
    ``{id, name, args}`` tool call."""
    function = call["function"] if isinstance(call.get("function"), dict) else {}
    return {
        "name": function.get("name", call.get("name")),
        "id": call.get("id"),
        "args": function.get("arguments", call.get("args")),
    }


def message_steps(found: Message) -> list[Step]:
    """A system / user / assistant step of a message with text or parts (docs/formats.md: an
    assistant turn yields a step when its text is non-empty); tool messages are read from
    tool runs instead."""
    if found.role == "tool" or (not found.text and not found.parts):
        return []
    if found.role == "assistant" and not (found.text or "").strip():
        # no assistant step without text (docs/formats.md, Coding-agent sessions): its other
        # parts (thinking) are an event
        return [{"kind": "event", "name": "thinking", "data": {"parts": found.parts}}] if found.parts else []
    return [message_step(found.role, found.text, found.parts, {})]


class Requests:
    """Tool calls a model asked for, and which of them a tool run (or observation) recorded.

    A requested call is recorded by the tool run with its call id, else by the first
    unclaimed tool run of the same name after it; a request that no run records becomes a
    `tool_call` step of its own (its status is then `missing`).
    """

    def __init__(self, runs: list[tuple[int, Any, Any]]) -> None:
        """`runs`: ``(position, call_id, name)`` of every tool run of the episode."""
        self.runs = runs
        self.ids = {call_id for _, call_id, _ in runs if _is_key(call_id)}
        self.claimed: set[int] = set()

    def unrecorded(self, position: int, calls: list[Record]) -> list[Step]:
        """The `tool_call` steps of the requests at `position` that no tool run records."""
        steps = []
        for call in calls:
            if _is_key(call["id"]) and call["id"] in self.ids:
                continue
            run = next((p for p, _, n in self.runs
                        if p > position and n == call["name"] and p not in self.claimed), None)
            if run is not None:
                self.claimed.add(run)
                continue
            steps.append(tool_call_step(call["name"], call["id"], call["args"]))
        return steps


def _is_key(value: Any) -> bool:
    """A call id that can be looked up: a string or a number (a recorded list or object cannot)."""
    return isinstance(value, (str, int)) and not isinstance(value, bool)


def text_of(value: Any) -> str | None:
    """A run's or observation's input/output as text: a string, or the text of a message, or of
    the single string value of an object (``{"input": "..."}``); None otherwise."""
    if isinstance(value, str):
        return value
    found = message(value) if isinstance(value, dict) and ("role" in value or "lc" in value) else None
    if found is not None:
        return found.text
    if isinstance(value, dict):
        strings = [v for v in value.values() if isinstance(v, str)]
        if len(strings) == 1 and len(value) == 1:
            return strings[0]
    return None
