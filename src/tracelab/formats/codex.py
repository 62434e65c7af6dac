"""Codex CLI sessions (`codex`): the rollout files Codex writes per session.

Codex keeps one `rollout-<time>-<id>.jsonl` per session under
`~/.codex/sessions/YYYY/MM/DD/`; resuming a session appends to the same file,
so a file is one episode. Every line is ``{timestamp, type, payload}``:
`session_meta` (id, cwd, cli_version, git, ...), `turn_context` (model, cwd,
approval and sandbox policy of a turn), `response_item` (the model's
Responses-API items: `message`, `reasoning`, `function_call`,
`function_call_output`, `custom_tool_call` (apply_patch), `local_shell_call`,
...), `event_msg` (UI events, mostly repeating the response items) and
`compacted` (a compaction of the history).
"""
from __future__ import annotations

import re
import shlex
from collections import Counter
from collections.abc import Iterator
from typing import Any

from tracelab.formats.base import Quarantined
from tracelab.formats.episodes import (
    build_episode,
    content_text,
    message_step,
    readable_timestamp,
    tool_call_step,
    tool_result_step,
)
from tracelab.formats.records import first_record, is_json_document
from tracelab.formats.source import BadJSON, Source, parse_json
from tracelab.formats.values import (
    TEXT_PART_TYPES,
    Record,
    RecordError,
    Step,
    optional_string,
    require_object,
    rest,
    type_of,
)

name = "codex"
summary = "Codex CLI rollout JSONL (~/.codex/sessions/**/rollout-*.jsonl): {timestamp, type, payload}"
maps = (
    "episode = one rollout file; session_meta: id -> episode_id, cli_version -> "
    "agent_version, timestamp -> started_at, instructions -> system step, cwd, git, "
    "originator, source, forked_from_id -> meta; turn_context -> event 'turn_context' (model, "
    "cwd, approval_policy, sandbox_policy; the first model -> model); response_item message: "
    "user -> user step (injected <environment_context>/<user_instructions>/AGENTS.md text -> "
    "event 'context'), developer/system -> system, assistant -> assistant; function_call -> "
    "tool_call (call_id, name, arguments); shell calls (shell, shell_command, exec_command, "
    "container.exec, local_shell_call) get args.command as one command line (the argv under "
    "args.argv; `bash -lc X` reads X); apply_patch (custom_tool_call or function) -> "
    "tool_call with args.input (the patch), args.file_path (first file) and args.file_paths; "
    "function_call_output / custom_tool_call_output -> tool_result (output text; denied when "
    "'rejected by user', error on a non-zero exit code or success false); reasoning summaries "
    "-> event 'reasoning'; compacted -> event 'compact'; event_msg: turn_aborted -> event, "
    "error -> error step, token_count -> meta.total_tokens (the others repeat response items); "
    "timestamp -> ts, last -> ended_at; agent codex"
    "; injected user items (<turn_aborted>, <subagent_notification>, skills) -> event; "
    "apply_patch output saying the patch failed -> error; every *_call item -> a tool_call "
    "named without the suffix (web_search_call -> web_search, action as args; its status as "
    "result when it has no call_id) and its *_output -> its result; unreadable timestamps -> "
    "NULL; lines of unknown types (world_state, ...) add no step and are counted in "
    "sources.unread; 2025 rollouts (no session_meta) are read"
)
unknown = (
    "tool definitions (the rollout does not record the tool list: tools_declared = false) and "
    "effects; termination, reward, case_id; encrypted reasoning; rollouts older than "
    "session_meta lines (2025 formats without `type`/`payload`) are not claimed"
)

LINE_TYPES = ("session_meta", "response_item", "event_msg", "turn_context", "compacted")
SHELL_TOOLS = ("shell", "shell_command", "exec_command", "container.exec", "local_shell")
PATCH_TOOL = "apply_patch"
SHELLS = ("bash", "sh", "zsh", "/bin/bash", "/bin/sh", "/bin/zsh", "/usr/bin/bash")
CONTEXT_PREFIXES = (
    "<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<turn_aborted>",
    "<subagent_notification>", "<skill>\n<name>",
)
"""How a user-role item Codex itself writes begins: an `event`, not a user message."""
PATCH_FAILED = ("apply_patch verification failed", "Failed to apply patch")
"""What an apply_patch output says when the patch was not applied."""
RESPONSE_ITEMS = frozenset({"message", "reasoning", "ghost_snapshot"})
"""`response_item` types read besides calls (`*_call`) and their outputs (`*_output`);
`ghost_snapshot` (a git snapshot Codex takes) adds no step."""
CALL_STATUS = {"completed": "ok", "failed": "error", "incomplete": "error"}
"""A call item's own `status`, for a call with no output item (`web_search_call`)."""
PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.MULTILINE)
EXIT_CODE = re.compile(r"^(?:Exit code: |Process exited with code )(-?\d+)$", re.MULTILINE)
"""How shell output states its exit code (`shell`: the first line; `exec_command`: a later one)."""
DENIED = "rejected by user"


def has_markers(record: Any) -> bool:
    """True for a rollout line: a known `type` with an object `payload` and a `timestamp`."""
    return (
        isinstance(record, dict)
        and record.get("type") in LINE_TYPES
        and isinstance(record.get("payload"), dict)
        and "timestamp" in record
    )


def is_legacy_head(record: Any) -> bool:
    """The first line of a 2025 rollout (before `session_meta` lines): the session's
    ``{id, timestamp, instructions?, git?}`` without `type`; its items follow bare."""
    return (isinstance(record, dict) and "type" not in record and "payload" not in record
            and isinstance(record.get("id"), str) and isinstance(record.get("timestamp"), str))


def claims(source: Source) -> bool:
    """JSON Lines whose first record is a rollout line (`has_markers`), or a 2025 rollout
    (`rollout-*.jsonl` opening with `is_legacy_head`)."""
    if is_json_document(source):
        return False
    first = first_record(source)
    return has_markers(first) or (source.name.startswith("rollout-") and is_legacy_head(first))


def episodes(source: Source) -> Iterator[tuple[int, dict[str, Any]] | Quarantined]:
    """The file's bad lines, then its one episode (numbered by its first good line)."""
    session = _Session(source.unread)
    first: int | None = None
    legacy = False
    for line, raw in source.lines():
        try:
            record = require_object(parse_json(raw), "the line")
            legacy = legacy or (first is None and is_legacy_head(record))
            session.add(_legacy(record, first is None) if legacy else record)
        except (BadJSON, RecordError) as exc:
            yield Quarantined(line, str(exc), raw)
            continue
        first = line if first is None else first
    if first is None:
        return
    if session.fields.get("episode_id") is None:
        session.fields["episode_id"] = f"{source.content_hash[:16]}:{first}"
    yield first, session.episode()


def _legacy(record: Record, head: bool) -> Record:
    """A line of a 2025 rollout as the rollout line it would be now: its head is the
    `session_meta`, a bare item a `response_item`, a ``{record_type: state}`` line nothing."""
    if head and is_legacy_head(record):
        return {"type": "session_meta", "timestamp": record["timestamp"], "payload": record}
    if record.get("record_type") == "state":
        return {"type": "state", "payload": {}}
    if isinstance(record.get("type"), str):
        return {"type": "response_item", "payload": record}
    return record


class _Session:
    """The episode being read, line by line."""

    def __init__(self, unread: Counter[str]) -> None:
        self.unread = unread
        self.fields: Record = {"agent": "codex"}
        self.meta: Record = {}
        self.steps: list[Step] = []
        self.names: dict[str, str] = {}  # call_id -> tool name, for results

    def episode(self) -> Record:
        fields = dict(self.fields)
        if self.meta:
            fields["meta"] = self.meta
        return build_episode(fields, self.steps, None, main_chain=True)

    def add(self, line: Record) -> None:
        kind, payload = line.get("type"), line.get("payload")
        if not isinstance(kind, str) or not kind:
            raise RecordError("the line has no `type`")
        if kind == "state":  # a 2025 rollout's state line: nothing of the conversation
            return
        if kind not in LINE_TYPES:  # a newer version's line type: counted, not read
            self.unread[kind] += 1
            return
        payload = require_object(payload, "payload")
        ts = readable_timestamp(line.get("timestamp"))
        steps = getattr(self, f"_{kind}")(payload)
        for step in steps:
            if ts is not None:
                step["ts"] = ts
            self.steps.append(step)
        if ts is not None:
            self.fields.setdefault("started_at", ts)
            self.fields["ended_at"] = ts

    def _session_meta(self, payload: Record) -> list[Step]:
        session_id = optional_string(payload.get("id"), "payload.id")
        if "episode_id" in self.fields:  # a resumed session writes its meta again
            return [{"kind": "event", "name": "resumed", "data": {"id": session_id}}]
        if session_id:
            self.fields["episode_id"] = session_id
        version = optional_string(payload.get("cli_version"), "payload.cli_version")
        if version:
            self.fields["agent_version"] = version
        started = readable_timestamp(payload.get("timestamp"))
        if started:
            self.fields["started_at"] = started
        self.meta.update(rest(payload, ("id", "cli_version", "timestamp", "instructions")))
        instructions = payload.get("instructions")
        return [message_step("system", instructions, [], {})] if isinstance(instructions, str) and instructions else []

    def _turn_context(self, payload: Record) -> list[Step]:
        model = payload.get("model")
        if isinstance(model, str) and model:
            self.fields.setdefault("model", model)
        return [{"kind": "event", "name": "turn_context", "data": payload}]

    def _compacted(self, payload: Record) -> list[Step]:
        return [{"kind": "event", "name": "compact", "data": rest(payload, ("replacement_history",))}]

    def _event_msg(self, payload: Record) -> list[Step]:
        kind = payload.get("type")
        if kind == "token_count":
            info = payload.get("info")
            usage = info.get("total_token_usage") if isinstance(info, dict) else None
            if isinstance(usage, dict) and isinstance(usage.get("total_tokens"), int):
                self.meta["total_tokens"] = usage["total_tokens"]
        elif kind == "error":
            text = payload.get("message")
            return [{"kind": "error", "text": text if isinstance(text, str) else None}]
        elif kind == "turn_aborted":
            return [{"kind": "event", "name": "turn_aborted", "data": rest(payload, ("type",))}]
        return []

    def _response_item(self, item: Record) -> list[Step]:
        kind = type_of(item)
        for key in ("call_id", "name"):
            optional_string(item.get(key), f"payload.{key}")
        if kind == "message":
            return _message(item)
        if kind is not None and kind.endswith("_call"):
            step = _call(item, kind)
            if isinstance(item.get("call_id"), str) and isinstance(step.get("name"), str):
                self.names[item["call_id"]] = step["name"]
            if item.get("call_id") is None and item.get("status") in CALL_STATUS:
                # no output item follows a call without a call_id: its own status is its result
                status = CALL_STATUS[item["status"]]
                return [step, tool_result_step(None, step.get("name"), None, status == "error")]
            return [step]
        if kind is not None and kind.endswith("_output") and "call_id" in item:
            return [_result(item, self.names.get(str(item.get("call_id"))))]
        if kind == "reasoning":
            summary = item.get("summary")
            texts = [p["text"] for p in summary if isinstance(p, dict) and isinstance(p.get("text"), str)] \
                if isinstance(summary, list) else []
            return [{"kind": "event", "name": "reasoning", "data": {"summary": texts}}] if texts else []
        if kind not in RESPONSE_ITEMS:  # a newer version's item type: counted, not read
            self.unread[f"response_item:{kind}"] += 1
        return []


def _message(item: Record) -> list[Step]:
    role = item.get("role")
    text, parts = content_text(item.get("content"), "payload.content")
    extra = rest(item, ("type", "role", "content", "id"))
    if role == "user":
        return _user_message(item.get("content"), text, parts, extra)
    if role in ("developer", "system"):
        return [message_step("system", text, parts, extra)]
    if role == "assistant":
        if text is None or not text.strip():  # no assistant step without text
            return [{"kind": "event", "name": "thinking", "data": {"parts": parts}}] if parts else []
        return [message_step("assistant", text, parts, extra)]
    raise RecordError(f"payload.role {role!r} is not user, developer, system or assistant")


def _user_message(content: Any, text: str | None, parts: list[Any], extra: Record) -> list[Step]:
    """A user item: what Codex wrote itself (`CONTEXT_PREFIXES`) is an event `context`, the rest
    the user's message. Codex may put both in one item, one text part each (a skill's body, then
    the user's words): each text part is judged on its own."""
    texts = [content] if isinstance(content, str) else [
        p if isinstance(p, str) else p["text"] for p in content or []
        if isinstance(p, str) or (type_of(p) in TEXT_PART_TYPES and isinstance(p.get("text"), str))]
    injected = [t for t in texts if t.lstrip().startswith(CONTEXT_PREFIXES)]
    if not injected:
        return [message_step("user", text, parts, extra)]
    steps: list[Step] = [{"kind": "event", "name": "context", "data": {"text": "\n".join(injected)}}]
    own = [t for t in texts if not t.lstrip().startswith(CONTEXT_PREFIXES)]
    if own or parts:
        steps.append(message_step("user", "\n".join(own) if own else None, parts, extra))
    return steps


def _call(item: Record, kind: str) -> Step:
    if kind == "local_shell_call":
        action = item["action"] if isinstance(item.get("action"), dict) else {}
        shell = {k: v for k, v in action.items() if k != "type"}
        return tool_call_step("local_shell", item.get("call_id"), _shell_args(shell))
    if kind not in ("function_call", "custom_tool_call"):
        # web_search_call -> web_search (its action as args), tool_search_call -> tool_search, ...
        given = item.get("action", item.get("arguments"))
        return tool_call_step(kind.removesuffix("_call"), item.get("call_id"), given)
    tool = item.get("name")
    raw = item.get("input") if kind == "custom_tool_call" else item.get("arguments")
    args: Any = raw
    if kind == "function_call" and isinstance(raw, str):
        try:
            args = parse_json(raw)
        except BadJSON:
            args = raw  # kept as recorded: ingest stores unparseable args as text
    if kind == "custom_tool_call" and isinstance(raw, str):
        args = {"input": raw}
    if isinstance(args, dict):
        if tool in SHELL_TOOLS:
            args = _shell_args(args)
        elif tool == PATCH_TOOL:
            args = _patch_args(args)
    return tool_call_step(tool, item.get("call_id"), args)


def _shell_args(args: Record) -> Record:
    """`command` as one command line; a list command moves to `argv`, `bash -lc X` reads X."""
    command = args.get("command", args.get("cmd"))
    if isinstance(command, list) and all(isinstance(part, str) for part in command):
        line = command[2] if len(command) == 3 and command[0] in SHELLS and command[1] in ("-lc", "-c") \
            else shlex.join(command)
        return {**{k: v for k, v in args.items() if k != "command"}, "command": line, "argv": command}
    if isinstance(command, str) and "command" not in args:
        return {**args, "command": command}
    return args


def _patch_args(args: Record) -> Record:
    patch = args.get("input", args.get("patch"))
    if not isinstance(patch, str):
        return args
    paths = [path.strip() for path in PATCH_FILE.findall(patch)]
    return {**args, "file_path": paths[0], "file_paths": paths} if paths else args


def _result(item: Record, tool: str | None) -> Step:
    output = item.get("output")
    text, failed, exit_code = _output(output)
    unapplied = tool == PATCH_TOOL and text is not None and any(s in text[:400] for s in PATCH_FAILED)
    failed = failed or unapplied  # a patch that was not applied is a failed call
    step = tool_result_step(item.get("call_id"), tool, text, failed)
    if text is not None and DENIED in text:
        step["status"] = "denied"
        step["error"] = text.split("\n", 1)[0]
    elif unapplied and exit_code is None:
        step["error"] = text.split("\n", 1)[0] if text else None
    elif failed:
        step["error"] = f"exit code {exit_code}" if exit_code is not None else text
    if exit_code is not None:
        step["meta"] = {"exit_code": exit_code}
    return step


def _output(output: Any) -> tuple[str | None, bool, int | None]:
    """The text of a call's output, whether it failed, and its exit code when recorded.

    Codex has written shell output as JSON text ``{"output", "metadata": {"exit_code"}}``,
    as plain text with a line ``Exit code: N`` (or ``Process exited with code N``) before the
    output, and as an object ``{content, success}``.
    """
    if isinstance(output, dict):
        text = output.get("content") if isinstance(output.get("content"), str) else None
        if text is None and isinstance(output.get("text"), str):  # one input_text part
            text = output["text"]
        return text, output.get("success") is False, None
    if isinstance(output, list):  # content parts
        texts = [p["text"] for p in output if isinstance(p, dict) and isinstance(p.get("text"), str)]
        return ("\n".join(texts) if texts else None), False, None
    if not isinstance(output, str):
        return None, False, None
    try:
        wrapped = parse_json(output) if output.startswith("{") else None
    except BadJSON:
        wrapped = None
    if isinstance(wrapped, dict) and isinstance(wrapped.get("output"), str):
        metadata = wrapped["metadata"] if isinstance(wrapped.get("metadata"), dict) else {}
        code = metadata.get("exit_code")
        code = code if isinstance(code, int) and not isinstance(code, bool) else None
        return wrapped["output"], bool(code), code
    found = EXIT_CODE.search(output, 0, 400)
    code = int(found.group(1)) if found else None
    return output, bool(code), code
