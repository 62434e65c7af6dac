"""The common rules every message-log adapter follows to build an episode (docs/formats.md,
"Common rules"), so that one run recorded in two formats gives the same rows:

- episode fields (`episode_fields`): `episode_id`, the labelled keys, `meta`;
- text of content (`content_text`), assistant turns (`assistant_turn`), tool calls and results
  (`tool_call_step`, `tool_result_step`);
- tool definitions (`tool_definition`) and the final episode (`build_episode`), which derives
  `input` and `output` from the steps.
"""
from __future__ import annotations

import datetime
import re
from collections.abc import Callable, Iterable
from typing import Any

from tracelab.formats.source import Source
from tracelab.formats.values import (
    TEXT_PART_TYPES,
    Record,
    RecordError,
    Step,
    json_text,
    json_type,
    type_of,
)

EPISODE_ID_KEYS = ("episode_id", "id")
"""Top-level keys giving `episode_id`, in order (then `metadata.episode_id`)."""


LABEL_KEYS = (
    "case_id", "agent", "agent_version", "model", "termination", "reward", "tags", "principal",
)
"""Episode fields read from the same-named top-level key, else from `metadata.<key>`."""


ENDS_ANSWER = frozenset({"assistant", "user", "tool_call", "tool_result"})
"""Main-chain step kinds after which an earlier answer is no longer the output; an event (or
an error, a system step) after the answer leaves it the output."""

_TIMESTAMP = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,]\d{1,9})?)?"
    r"(?:[Zz]|[+-](?:0\d|1[0-4])(?::?[0-5]\d)?)?)?")
"""What `tl_timestamp` (sql/ingest/macros.sql) reads as a timestamp."""


def _present(value: Any) -> bool:
    return value is not None and value != ""


def episode_fields(record: Record, source: Source, line: int, consumed: Iterable[str]) -> Record:
    """The episode-level fields of a record, by the common rules.

    `episode_id` is the record's `episode_id`, else `id`, else
    `metadata.episode_id`, else ``<first 16 hex of source.content_hash>:<line>``
    (deterministic, so re-ingest is idempotent). Each of `LABEL_KEYS` comes
    from the top-level key, else `metadata.<key>`. Every other top-level key
    (`metadata` itself included) goes to `meta`, except the `consumed` keys the
    adapter maps itself (e.g. `messages`, `tools`).
    """
    metadata = record.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    fields: Record = {}
    used = {"episode_id", *LABEL_KEYS, *consumed}
    id_key = next((key for key in EPISODE_ID_KEYS if _present(record.get(key))), None)
    if id_key is not None:
        fields["episode_id"] = record[id_key]
        used.add(id_key)
    elif _present(metadata.get("episode_id")):
        fields["episode_id"] = metadata["episode_id"]
    else:
        fields["episode_id"] = f"{source.content_hash[:16]}:{line}"
    for key in LABEL_KEYS:
        value = record.get(key)
        if value is None:
            value = metadata.get(key)
        if value is not None:
            fields[key] = value
    meta = {key: value for key, value in record.items() if key not in used}
    if meta:
        fields["meta"] = meta
    return fields


def label_fields(*holders: Record) -> Record:
    """Each of `LABEL_KEYS` from the first of `holders` where it is non-null.

    For formats whose labels live in an object of their own (Assay's `meta`,
    ATIF's `extra`) rather than at the top level or under `metadata`.
    """
    fields: Record = {}
    for key in LABEL_KEYS:
        value = next((h[key] for h in holders if h.get(key) is not None), None)
        if value is not None:
            fields[key] = value
    return fields


def build_episode(fields: Record, steps: list[Step], tools: list[Record] | None,
                  main_chain: bool = False) -> Record:
    """The native episode: `fields`, `steps`, `tools` (omitted when None), `input`, `output`.

    `input` is the text of the first `user` step; `output` the text of the last
    step when that step is an `assistant` step, else absent (NULL).

    With `main_chain` (docs/formats.md, Coding-agent sessions), sub-agent steps
    (``meta.sidechain``) and events are not the run's own words: `input` is the
    first main-chain user step, and `output` the last main-chain assistant step
    unless a main-chain user message, tool call or tool result follows it.
    """
    episode = dict(fields)
    own = [s for s in steps if not (s.get("meta") or {}).get("sidechain")] if main_chain else steps
    first_user = next((step for step in own if step["kind"] == "user"), None)
    if first_user is not None and first_user.get("text") is not None:
        episode["input"] = first_user["text"]
    if main_chain:
        last = next((s for s in reversed(own) if s["kind"] in ENDS_ANSWER), None)
    else:
        last = steps[-1] if steps else None
    if last is not None and last["kind"] == "assistant" and last.get("text") is not None:
        episode["output"] = last["text"]
    if tools is not None:
        episode["tools"] = tools
    episode["steps"] = steps
    return episode


def readable_timestamp(value: Any) -> str | None:
    """`value` when ingest reads it as a timestamp, else None: in a foreign format an
    unreadable `ts`, `started_at` or `ended_at` is left NULL, never a reason to quarantine the
    run (docs/formats.md, Coding-agent sessions: timestamps)."""
    if not isinstance(value, str):
        return None
    found = _TIMESTAMP.fullmatch(value)
    if found is None:
        return None
    year, month, day, hour, minute, second = (int(g) if g else 0 for g in found.groups())
    try:
        datetime.datetime(year, month, day, hour, minute, second)
    except ValueError:
        return None
    return value


def content_text(content: Any, where: str) -> tuple[str | None, list[Any]]:
    """The text of a message's content, and its non-text parts.

    A string is the text; None is no text. A list of parts contributes the
    `text` of its text parts (`TEXT_PART_TYPES`, or plain strings), joined
    with ``"\\n"``; other parts (images, audio) are returned to go to the
    step's `meta` under ``parts``. Anything else raises `RecordError`.
    """
    if content is None or isinstance(content, str):
        return content, []
    if not isinstance(content, list):
        raise RecordError(f"{where}: content is {json_type(content)}, not a string or a list")
    texts: list[str] = []
    others: list[Any] = []
    for part in content:
        if isinstance(part, str):
            texts.append(part)
        elif type_of(part) in TEXT_PART_TYPES and isinstance(part.get("text"), str):
            texts.append(part["text"])
        else:
            others.append(part)
    return ("\n".join(texts) if texts else None), others


def result_content(content: Any, where: str) -> tuple[str | None, Any, list[Any]]:
    """A tool result's ``(text, result, parts)``: text content as `content_text` reads it.

    A structured value that is neither a string nor a list of parts (an
    object, a number) is kept as the result's `result`, as recorded.
    """
    if content is None or isinstance(content, (str, list)):
        text, parts = content_text(content, where)
        return text, None, parts
    return None, content, []


def stamp(step: Step, ts: Any) -> Step:
    """`step` with its `ts` set to `ts` when that is a non-empty string (a record's own time)."""
    if isinstance(ts, str) and ts:
        step["ts"] = ts
    return step


def message_step(kind: str, text: str | None, parts: list[Any], extra: Record) -> Step:
    """A `system`/`user`/`assistant` step; non-text `parts` and `extra` keys go to its `meta`."""
    step: Step = {"kind": kind}
    if text is not None:
        step["text"] = text
    meta = dict(extra)
    if parts:
        meta["parts"] = parts
    if meta:
        step["meta"] = meta
    return step


def assistant_turn(
    text: str | None, parts: list[Any], extra: Record, calls: list[Step]
) -> list[Step]:
    """An assistant turn: an `assistant` step when its text is non-empty, then its `calls`.

    A turn with empty text but non-text parts still yields an `assistant` step
    (without text), so the parts are kept. Unmapped message keys (`extra`) go
    to the `meta` of the turn's first step.
    """
    if text or parts:
        return [message_step("assistant", text or None, parts, extra), *calls]
    if extra and calls:
        first = dict(calls[0], meta={**calls[0].get("meta", {}), **extra})
        return [first, *calls[1:]]
    return list(calls)


def tool_call_step(name: Any, call_id: Any, args: Any, meta: Record | None = None) -> Step:
    """A `tool_call` step; `args` as recorded (a JSON string stays a string: ingest parses it)."""
    step: Step = {"kind": "tool_call"}
    if name is not None:
        step["name"] = name
    if call_id is not None:
        step["call_id"] = call_id
    if args is not None:
        step["args"] = args
    if meta:
        step["meta"] = meta
    return step


def tool_result_step(
    call_id: Any,
    name: Any,
    text: str | None,
    failed: bool,
    error: Any = None,
    parts: list[Any] | None = None,
    result: Any = None,
) -> Step:
    """A `tool_result` step with an explicit status: `error` when `failed`, else `ok`.

    A non-string `error` value is kept as its compact JSON text (``true`` is
    just a flag and gives no error text).
    """
    step: Step = {"kind": "tool_result"}
    if call_id is not None:
        step["call_id"] = call_id
    if name is not None:
        step["name"] = name
    if text is not None:
        step["text"] = text
    if result is not None:
        step["result"] = result
    step["status"] = "error" if failed else "ok"
    if error is not None and error is not True:
        step["error"] = error if isinstance(error, str) else json_text(error)
    if parts:
        step["meta"] = {"parts": parts}
    return step


def result_failed(message: Record) -> bool:
    """True when a result message has a non-null `error` or `is_error: true` (JSON true only)."""
    return message.get("error") is not None or message.get("is_error") is True


def tool_definition(
    name: Any, description: Any, parameters: Any, *holders: Record
) -> Record:
    """A native tool definition. `effect` is the first `x-effect` (else `effect`) of `holders`;
    `annotations` (MCP tool annotations) the first of `holders` that has them: SQL derives an
    effect from them when none is recorded (docs/trace-format.md §6)."""
    definition: Record = {"name": name}
    if description is not None:
        definition["description"] = description
    if parameters is not None:
        definition["parameters"] = parameters
    for holder in holders:
        effect = holder.get("x-effect", holder.get("effect"))
        if effect is not None:
            definition["effect"] = effect
            break
    for holder in holders:
        if holder.get("annotations") is not None:
            definition["annotations"] = holder["annotations"]
            break
    return definition


def tool_list(record: Record, to_definition: Callable[[Any, int], Record]) -> list[Record] | None:
    """The record's `tools` mapped one by one; None (unknown) when the key is absent or null."""
    tools = record.get("tools")
    if tools is None:
        return None
    if not isinstance(tools, list):
        raise RecordError(f"tools is {json_type(tools)}, not a list")
    return [to_definition(tool, index) for index, tool in enumerate(tools)]
