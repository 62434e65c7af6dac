"""Native episodes written back as foreign records: the inverse of the message-log adapters.

`to_openai_chat` and `to_anthropic` turn a native episode dict (docs/trace-format.md
§2) into one record that the `openai-chat` / `anthropic` adapter reads back to
the same tool calls: names, call ids, args, result text and the ok / error
status, and the effects the definitions carry. Used by
``tracelab generate --as openai-chat|anthropic`` and by the cross-format tests.

What the target format cannot hold is lost, by design (`LOST`): a `denied`
status becomes `error`; step-level `effect`, `ts`, `duration_ms` and step
`meta`; steps of kinds other than system, user, assistant, tool_call and
tool_result (budget, retrieval, confirmation, event, error); `input` and
`output` (read back from the first user and last assistant message); `error`,
`started_at` and `ended_at` (kept as top-level keys, which read back into
`meta`). For Anthropic also a result's `error` text (only `is_error` exists)
and system steps after the first message.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from tracelab.formats.episodes import LABEL_KEYS

Record = dict[str, Any]

RESERVED = frozenset({"id", "messages", "tools", "metadata", "episode_id", "system", "meta",
                      "error", "started_at", "ended_at", *LABEL_KEYS})
"""Top-level keys the emitted records use: `meta` keys of these names nest under `meta`."""


def to_openai_chat(episode: Record) -> Record:
    """One OpenAI Chat Completions record (`openai-chat`) for a native episode."""
    messages: list[Record] = []
    for step in episode.get("steps") or []:
        kind = step.get("kind")
        if kind in ("system", "user"):
            messages.append({"role": kind, "content": step.get("text")})
        elif kind == "assistant":
            messages.append({"role": "assistant", "content": step.get("text")})
        elif kind == "tool_call":
            _chat_calls(messages).append(_chat_call(step))
        elif kind == "tool_result":
            messages.append(_chat_result(step))
    record = _header(episode)
    if episode.get("tools") is not None:
        record["tools"] = [_chat_tool(tool) for tool in episode["tools"]]
    record["messages"] = messages
    return record


def to_anthropic(episode: Record) -> Record:
    """One Anthropic Messages record (`anthropic`) for a native episode."""
    messages: list[Record] = []
    system: list[str] = []
    for step in episode.get("steps") or []:
        kind = step.get("kind")
        text = step.get("text")
        if kind == "system" and not messages and text is not None:
            system.append(text)
        elif kind == "user":
            messages.append({"role": "user", "content": text if text is not None else []})
        elif kind == "assistant" and text:
            _assistant_blocks(messages).append({"type": "text", "text": text})
        elif kind == "tool_call":
            _assistant_blocks(messages).append(_anthropic_call(step))
        elif kind == "tool_result":
            _result_blocks(messages).append(_anthropic_result(step))
    record = _header(episode)
    if system:
        record["system"] = "\n".join(system)
    if episode.get("tools") is not None:
        record["tools"] = [_anthropic_tool(tool) for tool in episode["tools"]]
    record["messages"] = messages
    return record


EMITTERS: dict[str, Callable[[Record], Record]] = {
    "openai-chat": to_openai_chat,
    "anthropic": to_anthropic,
}
"""The emitter of each format name ``tracelab generate --as`` accepts."""


def _header(episode: Record) -> Record:
    """`id`, the label keys, the run's error and times, and `meta`'s keys, at top level."""
    record: Record = {"id": episode.get("episode_id")}
    for key in (*LABEL_KEYS, "error", "started_at", "ended_at"):
        if episode.get(key) is not None:
            record[key] = episode[key]
    meta = episode.get("meta") or {}
    record.update({key: value for key, value in meta.items() if key not in RESERVED})
    nested = {key: value for key, value in meta.items() if key in RESERVED}
    if nested:
        record["meta"] = nested
    return record


def _args_text(args: Any) -> str | None:
    """Chat `arguments` are a JSON string: a string is kept as recorded, anything else dumped."""
    if args is None or isinstance(args, str):
        return args
    return orjson.dumps(args).decode()


def _result_text(step: Record) -> str | None:
    """The text a result carries: `text`, else `result` (a string as is, else its JSON text)."""
    if step.get("text") is not None:
        return step["text"]
    result = step.get("result")
    if result is None or isinstance(result, str):
        return result
    return orjson.dumps(result).decode()


def _failed(step: Record) -> bool:
    status = step.get("status")
    if status:
        return status != "ok"
    return step.get("is_error") is True


def _chat_calls(messages: list[Record]) -> list[Any]:
    """The `tool_calls` of the last message when it is the assistant's, else of a new one."""
    if not messages or messages[-1]["role"] != "assistant":
        messages.append({"role": "assistant", "content": None})
    return messages[-1].setdefault("tool_calls", [])


def _chat_call(step: Record) -> Record:
    function: Record = {"name": step.get("name")}
    if step.get("args") is not None:
        function["arguments"] = _args_text(step["args"])
    return {"id": step.get("call_id"), "type": "function", "function": function}


def _chat_result(step: Record) -> Record:
    message: Record = {"role": "tool", "tool_call_id": step.get("call_id")}
    if step.get("name") is not None:
        message["name"] = step["name"]
    message["content"] = _result_text(step)
    if _failed(step):
        message["is_error"] = True
        if step.get("error") is not None:
            message["error"] = step["error"]
    return message


def _chat_tool(tool: Record) -> Record:
    function: Record = {key: tool[key] for key in ("name", "description", "parameters") if key in tool}
    if tool.get("effect") is not None:
        function["x-effect"] = tool["effect"]
    return {"type": "function", "function": function}


def _assistant_blocks(messages: list[Record]) -> list[Any]:
    if not messages or messages[-1]["role"] != "assistant":
        messages.append({"role": "assistant", "content": []})
    return messages[-1]["content"]


def _result_blocks(messages: list[Record]) -> list[Any]:
    """The content of the last user message when it holds only tool results, else a new one."""
    last = messages[-1] if messages else None
    if (
        last is None
        or last["role"] != "user"
        or not isinstance(last["content"], list)
        or not last["content"]
        or any(block.get("type") != "tool_result" for block in last["content"])
    ):
        messages.append({"role": "user", "content": []})
    return messages[-1]["content"]


def _anthropic_call(step: Record) -> Record:
    """A `tool_use` block; JSON-string args become the `input` object they encode."""
    args = step.get("args")
    if isinstance(args, str):
        try:
            parsed = orjson.loads(args)
        except orjson.JSONDecodeError:
            parsed = None
        # Only a compact object round-trips to the same args_text; keep any other string.
        if isinstance(parsed, dict) and orjson.dumps(parsed).decode() == args:
            args = parsed
    block: Record = {"type": "tool_use", "id": step.get("call_id"), "name": step.get("name")}
    if args is not None:
        block["input"] = args
    return block


def _anthropic_result(step: Record) -> Record:
    block: Record = {"type": "tool_result", "tool_use_id": step.get("call_id")}
    text = _result_text(step)
    if text is not None:
        block["content"] = text
    if _failed(step):
        block["is_error"] = True
    return block


def _anthropic_tool(tool: Record) -> Record:
    out: Record = {key: tool[key] for key in ("name", "description") if key in tool}
    if "parameters" in tool:
        out["input_schema"] = tool["parameters"]
    if tool.get("effect") is not None:
        out["x-effect"] = tool["effect"]
    return out
