"""OpenAI Chat Completions message logs (`openai-chat`, docs/formats.md).

One JSON object per line with `messages` (and optional `tools`, `id`,
`metadata`, ...), or a bare array of messages per line. A `.json` file holds an
array of such records, or one bare array of messages (one episode).
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from tracelab.formats import anthropic, openai_responses
from tracelab.formats.base import Quarantined
from tracelab.formats.episodes import (
    assistant_turn,
    build_episode,
    content_text,
    episode_fields,
    message_step,
    result_content,
    result_failed,
    tool_call_step,
    tool_definition,
    tool_list,
    tool_result_step,
)
from tracelab.formats.records import first_record, is_json_document, map_records
from tracelab.formats.source import Source
from tracelab.formats.values import Record, RecordError, Step, require_list, require_object, rest, type_of

name = "openai-chat"
summary = "OpenAI Chat Completions message logs: {messages, tools?, id?, metadata?} or a bare array"
maps = (
    "messages: system/developer -> system, user -> user, assistant -> assistant + one tool_call "
    "per tool_calls[] (id -> call_id, function.name, function.arguments; legacy function_call), "
    "tool/function -> tool_result (tool_call_id, name, content; error when `error` is non-null "
    "or is_error is true); tools[].function -> definitions (effect from x-effect/effect); "
    "id/episode_id, case_id, agent, model, termination, reward, tags, principal (or metadata.*)"
)
unknown = (
    "tool definitions: unknown when the record has no `tools` (tools_declared = false); "
    "denied calls (no such status in the format); step-level effects; timestamps and durations"
)

ROLE_KINDS = {"system": "system", "developer": "system", "user": "user"}
RESULT_ROLES = ("tool", "function")
FOREIGN_PARTS = ("tool_use", "tool_result")


def _is_message(value: Any) -> bool:
    return isinstance(value, dict) and "role" in value and "messages" not in value


def _is_message_array(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(_is_message(m) for m in value)


def claims(source: Source) -> bool:
    """A first record with a `messages` list (not Anthropic's nor Responses'), or a bare array.

    In a `.json` file the first record of a bare message array is its first message.
    """
    record = first_record(source)
    if _is_message_array(record) or (is_json_document(source) and _is_message(record)):
        return True
    if not isinstance(record, dict) or not isinstance(record.get("messages"), list):
        return False
    if anthropic.has_markers(record) or openai_responses.has_markers(record):
        return False
    messages = record["messages"]
    return not messages or any(_is_message(m) for m in messages)


def episodes(source: Source) -> Iterator[tuple[int, dict[str, Any]] | Quarantined]:
    """One episode per record; a record that is not a chat log is quarantined."""
    return map_records(source, to_episode, whole=_is_message_array)


def to_episode(record: Any, source: Source, line: int) -> Record:
    """The native episode of one chat record (a dict with `messages`, or a message array)."""
    if isinstance(record, list):
        return build_episode(episode_fields({}, source, line, ()), _steps(record), None)
    if not isinstance(record, dict) or "messages" not in record:
        raise RecordError("not a chat record: expected an object with `messages` or an array")
    messages = require_list(record["messages"], "messages")
    tools = tool_list(record, chat_tool_definition)
    fields = episode_fields(record, source, line, ("messages", "tools"))
    return build_episode(fields, _steps(messages), tools)


def _steps(messages: list[Any]) -> list[Step]:
    steps: list[Step] = []
    for index, message in enumerate(messages):
        steps.extend(_message_steps(require_object(message, f"messages[{index}]"), index))
    return steps


def _message_steps(message: Record, index: int) -> list[Step]:
    where = f"messages[{index}]"
    role = message.get("role")
    if not isinstance(role, str) or not role:
        raise RecordError(f"{where}: no role")
    if role in RESULT_ROLES:
        return [_result(message, where)]
    text, parts = content_text(message.get("content"), where)
    _reject_foreign_parts(parts, where)
    if role == "assistant":
        extra = rest(message, ("role", "content", "tool_calls", "function_call"))
        return assistant_turn(text, parts, extra, _calls(message, where))
    if role in ROLE_KINDS:
        return [message_step(ROLE_KINDS[role], text, parts, rest(message, ("role", "content")))]
    raise RecordError(
        f"{where}: unknown role {role!r} (expected system, developer, user, assistant, tool "
        "or function)"
    )


def _reject_foreign_parts(parts: list[Any], where: str) -> None:
    for part in parts:
        if type_of(part) in FOREIGN_PARTS:
            raise RecordError(
                f"{where}: a {part['type']!r} content block is Anthropic's, not OpenAI chat; "
                "ingest this file with --format anthropic"
            )


def _calls(message: Record, where: str) -> list[Step]:
    calls = message.get("tool_calls")
    steps = []
    if calls is not None:
        for index, call in enumerate(require_list(calls, f"{where}.tool_calls")):
            at = f"{where}.tool_calls[{index}]"
            call = require_object(call, at)
            function = require_object(call.get("function"), f"{at}.function")
            steps.append(
                tool_call_step(
                    function.get("name"),
                    call.get("id"),
                    function.get("arguments"),
                    rest(call, ("id", "type", "function")),
                )
            )
    legacy = message.get("function_call")
    if legacy is not None:
        legacy = require_object(legacy, f"{where}.function_call")
        steps.append(tool_call_step(legacy.get("name"), None, legacy.get("arguments")))
    return steps


def _result(message: Record, where: str) -> Step:
    text, result, parts = result_content(message.get("content"), where)
    return tool_result_step(
        message.get("tool_call_id"),
        message.get("name"),
        text,
        result_failed(message),
        message.get("error"),
        parts,
        result,
    )


def chat_tool_definition(tool: Any, index: int) -> Record:
    """A native definition from one `tools[]` entry (`{type, function: {name, ...}}`); shared with openhands."""
    tool = require_object(tool, f"tools[{index}]")
    function = tool.get("function")
    if not isinstance(function, dict):
        # A non-function tool ({"type": "custom", "custom": {...}}) is named by its own object.
        function = tool.get(type_of(tool))
        function = function if isinstance(function, dict) else tool
    return tool_definition(
        function.get("name"),
        function.get("description"),
        function.get("parameters"),
        function,
        tool,
    )
