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
from collections.abc import Iterator
from typing import Any

from tracelab.formats.base import Quarantined
from tracelab.formats.episodes import build_episode, content_text, message_step, tool_call_step, tool_result_step
from tracelab.formats.records import first_record, is_json_document
from tracelab.formats.source import BadJSON, Source, parse_json
from tracelab.formats.values import Record, RecordError, Step, optional_string, require_object, rest, type_of

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
CONTEXT_PREFIXES = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions")
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


def claims(source: Source) -> bool:
    """JSON Lines whose first record is a rollout line (`has_markers`)."""
    return not is_json_document(source) and has_markers(first_record(source))


def episodes(source: Source) -> Iterator[tuple[int, dict[str, Any]] | Quarantined]:
    """The file's bad lines, then its one episode (numbered by its first good line)."""
    session = _Session()
    first: int | None = None
    for line, raw in source.lines():
        try:
            session.add(require_object(parse_json(raw), "the line"))
        except (BadJSON, RecordError) as exc:
            yield Quarantined(line, str(exc), raw)
            continue
        first = line if first is None else first
    if first is None:
        return
    if session.fields.get("episode_id") is None:
        session.fields["episode_id"] = f"{source.content_hash[:16]}:{first}"
    yield first, session.episode()


class _Session:
    """The episode being read, line by line."""

    def __init__(self) -> None:
        self.fields: Record = {"agent": "codex"}
        self.meta: Record = {}
        self.steps: list[Step] = []
        self.names: dict[str, str] = {}  # call_id -> tool name, for results

    def episode(self) -> Record:
        fields = dict(self.fields)
        if self.meta:
            fields["meta"] = self.meta
        return build_episode(fields, self.steps, None)

    def add(self, line: Record) -> None:
        kind, payload = line.get("type"), line.get("payload")
        if kind not in LINE_TYPES:
            raise RecordError(f"type {kind!r} is not a rollout line type ({', '.join(LINE_TYPES)})")
        payload = require_object(payload, "payload")
        ts = optional_string(line.get("timestamp"), "timestamp")
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
        started = optional_string(payload.get("timestamp"), "payload.timestamp")
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
            return [_message(item)]
        if kind in ("function_call", "custom_tool_call", "local_shell_call"):
            step = _call(item, kind)
            if isinstance(item.get("call_id"), str) and isinstance(step.get("name"), str):
                self.names[item["call_id"]] = step["name"]
            return [step]
        if kind in ("function_call_output", "custom_tool_call_output"):
            return [_result(item, self.names.get(str(item.get("call_id"))))]
        if kind == "reasoning":
            summary = item.get("summary")
            texts = [p["text"] for p in summary if isinstance(p, dict) and isinstance(p.get("text"), str)] \
                if isinstance(summary, list) else []
            return [{"kind": "event", "name": "reasoning", "data": {"summary": texts}}] if texts else []
        return [{"kind": "event", "name": kind or "response_item", "data": item}]


def _message(item: Record) -> Step:
    role = item.get("role")
    text, parts = content_text(item.get("content"), "payload.content")
    extra = rest(item, ("type", "role", "content", "id"))
    if role == "user":
        if text is not None and text.lstrip().startswith(CONTEXT_PREFIXES):
            return {"kind": "event", "name": "context", "data": {"text": text}}
        return message_step("user", text, parts, extra)
    if role in ("developer", "system"):
        return message_step("system", text, parts, extra)
    if role == "assistant":
        return message_step("assistant", text, parts, extra)
    raise RecordError(f"payload.role {role!r} is not user, developer, system or assistant")


def _call(item: Record, kind: str) -> Step:
    if kind == "local_shell_call":
        action = item["action"] if isinstance(item.get("action"), dict) else {}
        shell = {k: v for k, v in action.items() if k != "type"}
        return tool_call_step("local_shell", item.get("call_id"), _shell_args(shell))
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
    step = tool_result_step(item.get("call_id"), tool, text, failed)
    if text is not None and DENIED in text:
        step["status"] = "denied"
        step["error"] = text.split("\n", 1)[0]
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
        return text, output.get("success") is False, None
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
