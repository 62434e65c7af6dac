"""Anthropic Messages logs (`anthropic`, docs/formats.md).

One JSON object per line with `messages`, plus optional `system` and `tools`
(`{name, description, input_schema}`); a `.json` file holds an array of them.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from tracelab.formats.base import Quarantined
from tracelab.formats.episodes import (
    assistant_turn,
    build_episode,
    content_text,
    episode_fields,
    message_step,
    result_content,
    tool_call_step,
    tool_definition,
    tool_list,
    tool_result_step,
)
from tracelab.formats.records import first_record, map_records
from tracelab.formats.source import Source
from tracelab.formats.values import Record, RecordError, Step, require_list, require_object, rest, type_of

name = "anthropic"
summary = "Anthropic Messages logs: {messages, system?, tools?, id?, metadata?} per line"
maps = (
    "system -> first system step; user/assistant text blocks -> text; tool_use (and "
    "server_tool_use) blocks -> tool_call (id -> call_id, name, input -> args); tool_result "
    "blocks -> tool_result (tool_use_id, content string or blocks, is_error -> error; a user "
    "message of only tool_result blocks yields no user step); tools (input_schema -> "
    "parameters, effect from x-effect/effect); id/episode_id, case_id, agent, model, "
    "termination, reward, tags, principal (or metadata.*)"
)
unknown = (
    "tool definitions: unknown when the record has no `tools` (tools_declared = false); "
    "error messages of failed calls (only the is_error flag and the result text); denied calls; "
    "timestamps and durations; thinking blocks are kept in step meta, not in the transcript"
)

CALL_BLOCKS = ("tool_use", "server_tool_use")
RESULT = ("tool_result",)
MARKER_BLOCKS = frozenset(
    {"tool_use", "tool_result", "server_tool_use", "thinking", "redacted_thinking", "image",
     "document"}
)


def has_markers(record: Any) -> bool:
    """True when a record has something only Anthropic logs have.

    A top-level `system`, a tool with `input_schema`, or a content block of an
    Anthropic-only type. Plain-text messages have none: every message-log
    format reads those alike.
    """
    if not isinstance(record, dict):
        return False
    if "system" in record:
        return True
    tools = record.get("tools")
    if isinstance(tools, list) and any(isinstance(t, dict) and "input_schema" in t for t in tools):
        return True
    messages = record.get("messages")
    return isinstance(messages, list) and any(
        type_of(block) in MARKER_BLOCKS
        for message in messages
        if isinstance(message, dict) and isinstance(message.get("content"), list)
        for block in message["content"]
    )


def claims(source: Source) -> bool:
    """A first record with a `messages` list and an Anthropic-only marker (`has_markers`)."""
    record = first_record(source)
    return (
        isinstance(record, dict)
        and isinstance(record.get("messages"), list)
        and has_markers(record)
    )


def episodes(source: Source) -> Iterator[tuple[int, dict[str, Any]] | Quarantined]:
    """One episode per record; a record that is not a Messages log is quarantined."""
    return map_records(source, to_episode)


def to_episode(record: Any, source: Source, line: int) -> Record:
    """The native episode of one Messages record."""
    if not isinstance(record, dict) or "messages" not in record:
        raise RecordError("not an Anthropic Messages record: expected an object with `messages`")
    messages = require_list(record["messages"], "messages")
    tools = tool_list(record, _definition)
    steps: list[Step] = []
    if record.get("system") is not None:
        text, parts = content_text(record["system"], "system")
        steps.append(message_step("system", text, parts, {}))
    for index, message in enumerate(messages):
        steps.extend(_message_steps(require_object(message, f"messages[{index}]"), index))
    fields = episode_fields(record, source, line, ("messages", "system", "tools"))
    return build_episode(fields, steps, tools)


def _message_steps(message: Record, index: int) -> list[Step]:
    where = f"messages[{index}]"
    role = message.get("role")
    if not isinstance(role, str) or not role:
        raise RecordError(f"{where}: no role")
    if role not in ("user", "assistant"):
        raise RecordError(
            f"{where}: role {role!r} is not an Anthropic role (user, assistant); "
            "if this is an OpenAI chat log, ingest it with --format openai-chat"
        )
    content = message.get("content")
    blocks = content if isinstance(content, list) else []
    text, parts = content_text(content, where)
    extra = rest(message, ("role", "content"))
    if role == "assistant":
        calls = [_call(block) for _, block in _typed(blocks, CALL_BLOCKS)]
        others = [part for part in parts if not _is_type(part, CALL_BLOCKS)]
        _reject(others, "tool_result", where, role)
        return assistant_turn(text, others, extra, calls)
    results = [_result(block, f"{where}.content[{i}]") for i, block in _typed(blocks, RESULT)]
    others = [part for part in parts if not _is_type(part, RESULT)]
    _reject(others, "tool_use", where, role)
    if results and text is None and not others:
        return results
    return [*results, message_step("user", text, others, extra)]


def _typed(blocks: list[Any], types: tuple[str, ...]) -> list[tuple[int, Record]]:
    return [(i, block) for i, block in enumerate(blocks) if _is_type(block, types)]


def _is_type(block: Any, types: tuple[str, ...]) -> bool:
    return type_of(block) in types


def _reject(parts: list[Any], kind: str, where: str, role: str) -> None:
    if any(_is_type(part, (kind,)) for part in parts):
        raise RecordError(f"{where}: a {kind} block in a {role} message")


def _call(block: Record) -> Step:
    extra = rest(block, ("type", "id", "name", "input"))
    return tool_call_step(block.get("name"), block.get("id"), block.get("input"), extra)


def _result(block: Record, where: str) -> Step:
    text, result, parts = result_content(block.get("content"), where)
    failed = block.get("is_error") is True
    return tool_result_step(block.get("tool_use_id"), None, text, failed, None, parts, result)


def _definition(tool: Any, index: int) -> Record:
    tool = require_object(tool, f"tools[{index}]")
    return tool_definition(
        tool.get("name"), tool.get("description"), tool.get("input_schema"), tool
    )
