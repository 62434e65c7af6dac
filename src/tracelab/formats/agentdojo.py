"""AgentDojo runs as exported by Invariant Explorer (`agentdojo`).

JSON Lines. The first line is the file's own header,
``{"metadata": {"benchmark": "agent-dojo", "accuracy": ..., "name": ...}}``,
not an episode. Every later line is one run:
``{index, messages, metadata: {suite_name, user_task_id, injection_task_id,
attack_type, model, success, security, ...}, annotations}``. The messages are
OpenAI chat messages and map exactly as `openai-chat` does; AgentDojo's tool
messages name their call in ``tool_call.function`` and report a failure in
``error``.
"""
from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

from tracelab.formats import openai_chat
from tracelab.formats.base import Quarantined
from tracelab.formats.records import first_record, map_items, records
from tracelab.formats.source import Source
from tracelab.formats.values import Record, RecordError

name = "agentdojo"
summary = "AgentDojo runs (Invariant export): a header line, then one {messages, metadata} per line"
maps = (
    "header line -> meta.header of every episode (not an episode); messages: OpenAI chat "
    "messages, mapped as openai-chat (a tool message's name from tool_call.function; error when "
    "`error` is non-null, with that error text); case_id = <suite_name>/<user_task_id>"
    "[/<injection_task_id>]; metadata.model -> model; metadata (success, security, attack_type, "
    "...), index and annotations -> meta. success/security are labels, never verdicts"
)
unknown = (
    "tool definitions (they live in the agentdojo package, not in the export: tools_declared "
    "= false); agent; timestamps, durations and token usage; episode_id (derived from the file "
    "hash and line)"
)

BENCHMARK_NAMES = frozenset({"agent-dojo", "agentdojo"})


def _header(record: Any) -> Record | None:
    """The header line: an object holding `metadata` and no `messages`."""
    if isinstance(record, dict) and "messages" not in record:
        metadata = record.get("metadata")
        if isinstance(metadata, dict):
            return metadata
    return None


def _is_run(record: Any) -> bool:
    if not isinstance(record, dict) or not isinstance(record.get("messages"), list):
        return False
    metadata = record.get("metadata")
    return isinstance(metadata, dict) and "suite_name" in metadata and "user_task_id" in metadata


def claims(source: Source) -> bool:
    """A file whose header names the AgentDojo benchmark, or whose first record is a run."""
    record = first_record(source)
    header = _header(record)
    if header is not None:
        return str(header.get("benchmark", "")).lower() in BENCHMARK_NAMES
    return _is_run(record)


def episodes(source: Source) -> Iterator[tuple[int, dict[str, Any]] | Quarantined]:
    """One episode per run line; the header line is metadata, not an episode."""
    header = _header(first_record(source))
    items = records(source)
    if header is not None:
        next(items)
    return map_items(items, source, functools.partial(to_episode, header=header))


def to_episode(record: Any, source: Source, line: int, header: Record | None = None) -> Record:
    """The native episode of one AgentDojo run; `header` (the file's metadata) goes to meta."""
    if not isinstance(record, dict) or "messages" not in record:
        raise RecordError("not an AgentDojo run: expected an object with `messages`")
    chat = dict(record)
    if isinstance(record["messages"], list):
        chat["messages"] = [_named(message) for message in record["messages"]]
    case_id = _case_id(record.get("metadata"))
    if case_id is not None and "case_id" not in record:
        chat["case_id"] = case_id
    if header is not None:
        chat["header"] = header
    return openai_chat.to_episode(chat, source, line)


def _named(message: Any) -> Any:
    """A tool message with `name` taken from AgentDojo's ``tool_call.function`` when absent."""
    if not isinstance(message, dict) or message.get("role") != "tool" or "name" in message:
        return message
    call = message.get("tool_call")
    if isinstance(call, dict) and isinstance(call.get("function"), str):
        return {**message, "name": call["function"]}
    return message


def _case_id(metadata: Any) -> str | None:
    """``suite/user_task[/injection_task]``: the same case across models and defenses."""
    if not isinstance(metadata, dict) or metadata.get("case_id") is not None:
        return None
    suite, task = metadata.get("suite_name"), metadata.get("user_task_id")
    if not isinstance(suite, str) or not isinstance(task, str):
        return None
    injection = metadata.get("injection_task_id")
    return f"{suite}/{task}/{injection}" if isinstance(injection, str) else f"{suite}/{task}"
