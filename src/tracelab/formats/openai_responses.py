"""OpenAI Responses API logs (`openai-responses`, docs/formats.md).

One object per line: its `input` (a string, or a list of items) followed by its
`output` items, or a single `items` list; optional `instructions` and flat
`tools`. A stored Response object (`"object": "response"`) with its `input`
added reads the same way. A `.json` file holds an array of such records.
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
    result_failed,
    tool_call_step,
    tool_definition,
    tool_list,
    tool_result_step,
)
from tracelab.formats.records import first_record, map_records
from tracelab.formats.source import Source
from tracelab.formats.values import Record, RecordError, Step, require_list, require_object, rest, type_of

name = "openai-responses"
summary = "OpenAI Responses API logs: {instructions?, input, output} or {items}, flat tools"
maps = (
    "instructions -> first system step; input string -> user step; message items "
    "(input_text/output_text parts) -> system/user/assistant steps; function_call (and "
    "custom_tool_call) -> tool_call (call_id, name, arguments); function_call_output -> "
    "tool_result (call_id, output as text); other items (reasoning, web_search_call, ...) -> "
    "event steps named by their type; flat tools {name, description, parameters} (effect from "
    "x-effect/effect); id/episode_id, case_id, agent, model, termination, reward, tags, "
    "principal (or metadata.*)"
)
unknown = (
    "tool definitions: unknown when the record has no `tools` (tools_declared = false); "
    "failed calls (a function_call_output has no error flag: status ok unless it carries a "
    "non-null `error` or is_error true); denied calls; timestamps and durations"
)

CONSUMED = ("input", "output", "items", "instructions", "tools")
ROLE_KINDS = {"system": "system", "developer": "system", "user": "user"}
CALL_ITEMS = {"function_call": "arguments", "custom_tool_call": "input"}
RESULT_ITEMS = ("function_call_output", "custom_tool_call_output")


def _is_items(value: Any) -> bool:
    return isinstance(value, list) and all(
        isinstance(item, dict) and ("type" in item or "role" in item) for item in value
    )


def has_markers(record: Any) -> bool:
    """True when a record is a Responses log.

    That is `"object": "response"`, an `items` list of items, or an `output`
    list of items next to an `input`; never a record with `messages` or
    `steps` (chat logs, native episodes).
    """
    if not isinstance(record, dict) or "messages" in record or "steps" in record:
        return False
    if record.get("object") == "response" or _is_items(record.get("items")):
        return True
    return _is_items(record.get("output")) and isinstance(record.get("input"), (str, list))


def claims(source: Source) -> bool:
    """A first record that `has_markers`."""
    return has_markers(first_record(source))


def episodes(source: Source) -> Iterator[tuple[int, dict[str, Any]] | Quarantined]:
    """One episode per record; a record that is not a Responses log is quarantined."""
    return map_records(source, to_episode)


def to_episode(record: Any, source: Source, line: int) -> Record:
    """The native episode of one Responses record."""
    if not isinstance(record, dict) or not ({"input", "output", "items"} & record.keys()):
        raise RecordError(
            "not a Responses record: expected an object with `input`, `output` or `items`"
        )
    tools = tool_list(record, _definition)
    steps: list[Step] = []
    instructions = record.get("instructions")
    if isinstance(instructions, str):
        steps.append(message_step("system", instructions, [], {}))
    elif instructions is not None:
        steps.extend(_items(require_list(instructions, "instructions"), "instructions"))
    if "items" in record:
        steps.extend(_items(require_list(record["items"], "items"), "items"))
    else:
        steps.extend(_input_steps(record.get("input")))
        if record.get("output") is not None:
            steps.extend(_items(require_list(record["output"], "output"), "output"))
    fields = episode_fields(record, source, line, CONSUMED)
    return build_episode(fields, steps, tools)


def _input_steps(value: Any) -> list[Step]:
    if value is None:
        return []
    if isinstance(value, str):
        return [message_step("user", value, [], {})]
    return _items(require_list(value, "input"), "input")


def _items(items: list[Any], key: str) -> list[Step]:
    steps: list[Step] = []
    for index, item in enumerate(items):
        steps.extend(_item_steps(require_object(item, f"{key}[{index}]"), f"{key}[{index}]"))
    return steps


def _item_steps(item: Record, where: str) -> list[Step]:
    kind = type_of(item)
    if kind is None and "role" in item:
        kind = "message"
    if kind == "message":
        return _message(item, where)
    if kind in CALL_ITEMS:
        args_key = CALL_ITEMS[kind]
        extra = rest(item, ("type", "call_id", "name", args_key))
        return [tool_call_step(item.get("name"), item.get("call_id"), item.get(args_key), extra)]
    if kind in RESULT_ITEMS:
        text, result, parts = result_content(item.get("output"), where)
        failed = result_failed(item)
        error = item.get("error")
        return [tool_result_step(item.get("call_id"), None, text, failed, error, parts, result)]
    if kind:
        return [{"kind": "event", "name": kind, "data": rest(item, ("type",))}]
    raise RecordError(f"{where}: an item with neither a `type` string nor a `role`")


def _message(item: Record, where: str) -> list[Step]:
    role = item.get("role")
    if not isinstance(role, str) or not role:
        raise RecordError(f"{where}: a message item without a role")
    text, parts = content_text(item.get("content"), where)
    extra = rest(item, ("type", "role", "content"))
    if role == "assistant":
        return assistant_turn(text, parts, extra, [])
    if role in ROLE_KINDS:
        return [message_step(ROLE_KINDS[role], text, parts, extra)]
    raise RecordError(
        f"{where}: unknown role {role!r} (expected system, developer, user or assistant)"
    )


def _definition(tool: Any, index: int) -> Record:
    tool = require_object(tool, f"tools[{index}]")
    # Built-in tools ({"type": "web_search"}) have no name: their type names them.
    return tool_definition(
        tool.get("name", tool.get("type")), tool.get("description"), tool.get("parameters"), tool
    )
