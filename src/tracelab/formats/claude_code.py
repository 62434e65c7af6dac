"""Claude Code sessions (`claude-code`): the JSON Lines Claude Code writes per session.

Claude Code keeps one file per session under `~/.claude/projects/<project>/`,
one entry per line: `user` and `assistant` entries carry an Anthropic
`message` (text, `tool_use` and `tool_result` blocks), `system` entries mark
compaction and other notices, `summary` lines title the session, and
bookkeeping lines (file-history snapshots, queue operations, ...) carry no
conversation. Every conversation entry has `sessionId`, `uuid`, `parentUuid`,
`timestamp`, `cwd`, `version` and `isSidechain`.

One session can span several files of its project folder: a resumed session is
a new file that starts with a copy of the earlier entries (still carrying the
earlier `sessionId`), a plan carried into a fresh context keeps the session's
`slug`, and sub-agents write `agent-<id>.jsonl` files (or
`<session>/subagents/agent-<id>.jsonl`) whose entries carry the parent's
`sessionId` and `isSidechain: true`. Reading any file of such a group yields
the group's one episode, the same whichever file it is read from, so ingest
stores it once and reports the other files as merged into it (`merges_files`).
"""
from __future__ import annotations

import functools
import heapq
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tracelab.errors import DataError
from tracelab.formats.base import Quarantined
from tracelab.formats.episodes import (
    assistant_turn,
    build_episode,
    content_text,
    message_step,
    readable_timestamp,
    result_content,
    tool_call_step,
    tool_result_step,
)
from tracelab.formats.records import first_record, is_json_document
from tracelab.formats.source import BadJSON, Source, display_path, parse_json
from tracelab.formats.values import Record, RecordError, Step, optional_string, require_object, type_of

name = "claude-code"
merges_files = True
"""Every file of a session yields the session's one episode (module docstring): ingest reports the
later files as merged into the session, not as already ingested."""
summary = "Claude Code session JSONL (~/.claude/projects/*/*.jsonl): one entry per line"
maps = (
    "episode = a session: every file of the project folder linked to it by sessionId "
    "(resumed sessions copy earlier entries with the earlier sessionId; sub-agent files "
    "agent-*.jsonl carry the parent's) or by slug, entries merged by timestamp and "
    "de-duplicated by uuid; episode_id = the sessionId of its first file. user text -> "
    "user step; assistant text -> assistant, tool_use -> tool_call (id, name, input as args: "
    "Bash {command}, Write/Edit {file_path}, ...), thinking -> step meta; tool_result -> "
    "tool_result (tool_use_id, content; is_error -> error, or denied when the text is Claude "
    "Code's refusal: 'The user doesn't want to proceed...', 'Permission to use ... has been "
    "denied'); isSidechain entries -> steps with meta sidechain, subagent (the Task call's "
    "subagent_type), agent_id; system compact_boundary -> event 'compact'; a /clear command -> "
    "event 'clear', other slash commands -> event 'command'; compaction summaries, "
    "interruptions, meta entries -> events; isApiErrorMessage -> error step; timestamp -> ts, "
    "first/last -> started_at/ended_at; agent claude-code, version -> agent_version, first "
    "assistant model -> model; cwd, gitBranch, slug, sessions, summaries -> meta"
    "; <session>/subagents/agent-*.jsonl is linked by its folder's name too; a sub-agent "
    "without its own file: its agent_progress copies -> its steps (meta.from_progress); an "
    "entry without text -> no assistant step (its thinking -> the next step's meta.parts, "
    "else event 'thinking'); output = the last main-chain answer (events and sidechain steps "
    "after it do not count), input = the first main-chain user message; a uuid repeated with "
    "different content -> both copies quarantined (docs/formats.md)"
)
unknown = (
    "tool definitions (Claude Code does not log its tool list: tools_declared = false) and "
    "effects; termination, reward, case_id; a refusal by the user and an interruption of a "
    "running tool write the same text, so both are denied; structured toolUseResult copies "
    "(whole file contents of edits) are not kept; bookkeeping lines (file-history-snapshot, "
    "queue-operation, progress, ...) add no step; a file of only summary lines (older "
    "versions) holds no session and yields nothing"
    "; bookkeeping lines (permission-mode, mode, ai-title, last-prompt, "
    "file-history-snapshot, queue-operation, harness-state system lines) add no step; lines "
    "of unknown types add no step and are counted in sources.unread"
)

CONVERSATION = ("user", "assistant", "system")
BOOKKEEPING = frozenset({
    "summary", "file-history-snapshot", "queue-operation", "progress", "custom-title", "tag",
    "pr-link", "last-prompt", "attachment", "agent-name", "permission-mode", "mode", "ai-title",
})
"""Entry types that hold no conversation: they add no step (summaries go to meta; `progress`
copies of a sub-agent's entries are its steps when its own file is absent)."""
SESSION_BOOKKEEPING = frozenset({
    "queue-operation", "permission-mode", "last-prompt", "ai-title", "custom-title", "agent-name",
})
"""Bookkeeping lines that carry the session's `sessionId` and a type name only Claude Code
writes: a file may open with one (`has_markers`)."""
SYSTEM_EVENTS = frozenset({"compact_boundary", "local_command", "informational", "api_error"})
"""`system` subtypes that are part of the conversation (an event step); the others record
harness state (`stop_hook_summary`, `turn_duration`, `session_start`, ...) and add no step."""
HARNESS_SUBTYPES = frozenset({
    "stop_hook_summary", "turn_duration", "session_start", "hook_summary", "away_summary",
    "bridge_status", "scheduled_task_fire", "microcompact_boundary",
})
"""`system` subtypes known to record harness state: no step, and not counted as unread."""
ENVELOPE = (
    "type", "uuid", "parentUuid", "logicalParentUuid", "sessionId", "timestamp", "cwd",
    "version", "gitBranch", "slug", "userType", "isSidechain", "agentId", "requestId", "message",
    "isMeta", "isCompactSummary", "toolUseResult", "isApiErrorMessage", "subtype", "content",
    "level", "compactMetadata", "isVisibleInTranscriptOnly",
)
CALL_BLOCKS = ("tool_use", "server_tool_use")
RESULT_BLOCKS = ("tool_result",)
SUBAGENT_TOOLS = ("Task", "Agent")
DENIALS = (
    "The user doesn't want to proceed with this tool use",
    "The user doesn't want to take this action right now",
)
DENIED_PERMISSION = re.compile(r"^Permission to use .* has been denied")
COMMAND = re.compile(r"<command-name>(.*?)</command-name>", re.DOTALL)
COMMAND_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.DOTALL)
INTERRUPTED = "[Request interrupted by user"
THINKING = "thinking"
"""The event of an assistant entry without text: its thinking, carried to the next step of the
same model turn when there is one (`_Thinking`)."""
HEAD_LINES = 64
"""Lines read from each file of a project folder to find the session it belongs to."""


def has_markers(record: Any) -> bool:
    """True for an entry only Claude Code writes: a conversation entry with `sessionId` and
    `parentUuid`, a `summary` with its `leafUuid`, a file-history snapshot, or a session
    bookkeeping line with its `sessionId` (a session started with `-p` opens with
    `queue-operation` lines)."""
    if not isinstance(record, dict):
        return False
    kind = record.get("type")
    if kind in CONVERSATION:
        return isinstance(record.get("sessionId"), str) and "parentUuid" in record
    if kind == "summary":
        return "leafUuid" in record
    if kind in SESSION_BOOKKEEPING:
        return isinstance(record.get("sessionId"), str)
    return kind == "file-history-snapshot" and "snapshot" in record


def claims(source: Source) -> bool:
    """JSON Lines whose first record is a Claude Code entry (`has_markers`)."""
    return not is_json_document(source) and has_markers(first_record(source))


def episodes(source: Source) -> Iterator[tuple[int, dict[str, Any]] | Quarantined]:
    """This file's bad lines, then the episode of the session group it belongs to."""
    own = _read(source)
    source.unread.update(own.unread)
    yield from own.bad
    if not own.entries or own.head is None:
        return
    episode, conflicts = _group_episode(source.path, own)
    clashing = conflicts.get(source.path, [])
    for line, reason in clashing:
        yield Quarantined(line, reason)
    lines = [e.line for e in own.entries if e.line not in {line for line, _ in clashing}]
    if lines:
        yield lines[0], episode


# -- one file ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Entry:
    line: int
    record: Record
    steps: list[Step]
    copy: _Entry | None = None
    """Of a `progress` line: the sub-agent entry it copies (`agent_progress`), with its steps."""


@dataclass(frozen=True)
class _File:
    """A file's good entries (with their steps), its bad lines, and its head."""

    entries: list[_Entry]
    bad: list[Quarantined]
    head: _Head | None
    path: Path | None = None
    unread: dict[str, int] | None = None
    """Lines of a type this adapter does not know, by type (not read: docs/formats.md)."""


@dataclass(frozen=True)
class _Head:
    """What links a file to its session group: its first `sessionId` and its `slug`."""

    session: str
    slug: str | None
    sidechain: bool
    started: str


def _read(source: Source) -> _File:
    """Every line of a file mapped: good entries with their steps, bad lines quarantined."""
    entries: list[_Entry] = []
    bad: list[Quarantined] = []
    unread: dict[str, int] = {}
    for line, raw in source.lines():
        try:
            record = require_object(parse_json(raw), "the entry")
            entries.append(_Entry(line, record, _entry_steps(record), _progress_copy(line, record)))
            kind = _unknown(record)
            if kind is not None:
                unread[kind] = unread.get(kind, 0) + 1
        except (BadJSON, RecordError) as exc:
            bad.append(Quarantined(line, str(exc), raw))
    return _File(entries, bad, _head(entries), source.path, unread)


def _unknown(record: Record) -> str | None:
    """The type of an entry this adapter does not know (a newer version's), else None."""
    kind = record.get("type")
    if not isinstance(kind, str) or kind in BOOKKEEPING or kind in ("user", "assistant"):
        return None
    if kind != "system":
        return kind
    subtype = record.get("subtype")
    if not isinstance(subtype, str) or subtype in SYSTEM_EVENTS or subtype in HARNESS_SUBTYPES \
            or record.get("level") == "error":
        return None
    return f"system:{subtype}"


def _progress_copy(line: int, record: Record) -> _Entry | None:
    """The sub-agent entry an `agent_progress` line copies, as an entry of its own (sidechain,
    its `agentId`); None for other lines, or a copy that cannot be read (the sub-agent's file,
    when present, is read instead)."""
    data = record.get("data")
    if record.get("type") != "progress" or not isinstance(data, dict) or data.get("type") != "agent_progress":
        return None
    copied = data.get("message")
    if isinstance(copied, dict) and "type" not in copied and copied.get("role") in ("user", "assistant"):
        copied = {"type": copied["role"], "message": copied}  # the bare message, without its entry
    if not isinstance(copied, dict) or copied.get("type") not in ("user", "assistant"):
        return None
    entry = {**copied, "isSidechain": True}
    if isinstance(data.get("agentId"), str):
        entry["agentId"] = data["agentId"]
    for key in ("sessionId", "cwd", "version"):
        if key in record and key not in entry:
            entry[key] = record[key]
    try:
        steps = _entry_steps(entry)
    except RecordError:
        return None
    return _Entry(line, entry, steps)


def _head(entries: list[_Entry]) -> _Head | None:
    first = next((e.record for e in entries if isinstance(e.record.get("sessionId"), str)), None)
    if first is None:
        return None
    stamps = [e.record["timestamp"] for e in entries if readable_timestamp(e.record.get("timestamp"))]
    sidechain = first.get("isSidechain") is True
    slug = first.get("slug") if isinstance(first.get("slug"), str) and not sidechain else None
    return _Head(first["sessionId"], slug, sidechain, min(stamps, default=""))


# -- the session group of a file -------------------------------------------------------------


_built: dict[tuple[tuple[str, int, int], ...], tuple[Record, Conflicts]] = {}
"""The last groups' episodes, by their files' (path, mtime, size): each file of a group yields
the same episode, built once while its files are unchanged."""
KEEP_BUILT = 2


Conflicts = dict[Path, list[tuple[int, str]]]
"""Lines quarantined as uuid conflicts, by file: ``(line, reason)``."""


def _group_episode(path: Path, own: _File) -> tuple[Record, Conflicts]:
    group = [p for p in _group(path) if p == path or p.is_file()]
    key = tuple((str(p), st.st_mtime_ns, st.st_size) for p in group for st in [p.stat()])
    if key not in _built:
        if len(_built) >= KEEP_BUILT:
            del _built[next(iter(_built))]
        files = [own if p == path else _read_other(p) for p in group]
        _built[key] = _episode([f for f in files if f is not None])
    return _built[key]


def _read_other(path: Path) -> _File | None:
    """Another file of the group; one that cannot be read is reported when it is ingested
    itself, and its session is read without it here."""
    try:
        return _read(Source(path))
    except (DataError, OSError):
        return None


def _group(path: Path) -> list[Path]:
    """The files of `path`'s session, in the order their entries merge (main files first)."""
    project = path.parent.parent.parent if path.parent.name == "subagents" else path.parent
    heads = _heads(project, project.stat().st_mtime_ns)
    if path not in heads:
        return [path]
    parent = {p: p for p in heads}

    def root(p: Path) -> Path:
        while parent[p] != p:
            parent[p] = parent[parent[p]]
            p = parent[p]
        return p

    owner: dict[tuple[str, str], Path] = {}
    for p, head in heads.items():
        keys = [("session", head.session)] + ([("slug", head.slug)] if head.slug else [])
        if p.parent.name == "subagents":  # <session>/subagents/agent-*.jsonl: linked by its folder
            keys.append(("session", p.parent.parent.name))
        for key in keys:
            if key in owner:
                parent[root(p)] = root(owner[key])
            else:
                owner[key] = p
    members = [p for p in heads if root(p) == root(path)]
    return sorted(members, key=lambda p: (heads[p].sidechain, heads[p].started, str(p)))


@functools.lru_cache(maxsize=4)
def _heads(project: Path, mtime_ns: int) -> dict[Path, _Head]:
    """The head of every Claude Code file of a project folder (cached while it is unchanged)."""
    candidates = sorted(
        p for pattern in ("*.jsonl*", "*/subagents/*.jsonl*") for p in project.glob(pattern)
        if p.is_file() and Source(p).stem_name.endswith(".jsonl")
    )
    heads = {}
    for path in candidates:
        head = _peek(path)
        if head is not None:
            heads[path] = head
    return heads


def _peek(path: Path) -> _Head | None:
    """The head of a file from its first lines, or None when it is no Claude Code session."""
    entries: list[Any] = []
    try:
        for line, raw in Source(path).lines(chunk_size=1 << 16):
            try:
                record = parse_json(raw)
            except BadJSON:
                continue
            if isinstance(record, dict):
                if not entries and not has_markers(record):
                    return None
                entries.append(_Entry(line, record, []))
                if isinstance(record.get("sessionId"), str):
                    break
            if line >= HEAD_LINES:
                break
    except (DataError, OSError):  # an unreadable neighbour is reported when it is ingested itself
        return None
    return _head(entries)


# -- the episode ---------------------------------------------------------------------------


def _episode(files: list[_File]) -> tuple[Record, Conflicts]:
    """The merged session: entries by timestamp (each file in its own order), uuids once.

    An entry whose uuid repeats with different content is a conflict (a file can claim another
    session's entry): neither copy is kept, and each is quarantined naming the other's file.
    A sub-agent's `progress` copies are its steps only when no file of the group is its own.
    """
    conflicts, reasons = _conflicts(files)
    agents = {e.record["agentId"] for f in files for e in f.entries
              if e.record.get("isSidechain") is True and isinstance(e.record.get("agentId"), str)}
    seen: set[str] = set()
    steps: list[Step] = []
    records: list[Record] = []
    subagents = _Subagents()
    thinking = _Thinking()
    for _, _, _, entry in heapq.merge(*(_keyed(rank, f) for rank, f in enumerate(files))):
        extra: Record = {}
        if entry.copy is not None and entry.copy.record.get("agentId") not in agents:
            entry, extra = entry.copy, {"from_progress": True}
        uuid = entry.record.get("uuid")
        if isinstance(uuid, str):
            if uuid in seen or uuid in conflicts:
                continue
            seen.add(uuid)
        records.append(entry.record)
        extra = {**subagents.meta(entry), **extra}
        own = []
        for step in entry.steps:
            step = dict(step)
            ts = readable_timestamp(entry.record.get("timestamp"))
            if ts is not None:
                step["ts"] = ts
            if extra:
                step["meta"] = {**step.get("meta", {}), **extra}
            own.append(step)
        steps.extend(thinking.place(entry.record, own))
    episode = build_episode(_fields(files, records), [s for s in steps if not s.get(_DROPPED)], None,
                            main_chain=True)
    if conflicts:
        episode["meta"]["uuid_conflicts"] = len(conflicts)
    return episode, reasons


def _conflicts(files: list[_File]) -> tuple[set[str], Conflicts]:
    """The uuids that repeat with different content, and the quarantine reason of each copy."""
    first: dict[str, tuple[Path | None, int, Any]] = {}
    clashing: dict[str, list[tuple[Path | None, int]]] = {}
    for f in files:
        for entry in f.entries:
            uuid = entry.record.get("uuid")
            if not isinstance(uuid, str):
                continue
            content = _content(entry.record)
            if uuid not in first:
                first[uuid] = (f.path, entry.line, content)
            elif first[uuid][2] != content:
                clashing.setdefault(uuid, [first[uuid][:2]]).append((f.path, entry.line))
    reasons: Conflicts = {}
    for places in clashing.values():
        for path, line in places:
            others = ", ".join(f"{_shown(p)} line {n}" for p, n in places if (p, n) != (path, line))
            reason = (f"uuid conflict: this entry's uuid is also at {others} with different "
                      "content; neither is kept (a file can claim another session's entry)")
            if path is not None:
                reasons.setdefault(path, []).append((line, reason))
    return set(clashing), reasons


def _content(record: Record) -> Any:
    """What a copy of an entry must repeat: its conversation, not its bookkeeping."""
    return tuple(record.get(key) for key in ("type", "message", "content", "subtype", "isSidechain"))


def _shown(path: Path | None) -> str:
    return display_path(str(path)) if path is not None else "another file"


_DROPPED = "__dropped"


class _Thinking:
    """Thinking of an assistant entry without text, carried to the next step of the same model
    turn (same `message.id`, same chain); an `event` step `thinking` when the turn has no other."""

    def __init__(self) -> None:
        self.pending: dict[Any, tuple[Any, Step]] = {}  # chain -> (message id, its event step)

    def place(self, record: Record, steps: list[Step]) -> list[Step]:
        if not steps:
            return steps
        chain = record.get("agentId") if record.get("isSidechain") is True else None
        message = record.get("message")
        turn = message.get("id") if isinstance(message, dict) and record.get("type") == "assistant" else None
        held = self.pending.pop(chain, None)
        if held is not None and turn is not None and held[0] == turn:
            held[1][_DROPPED] = True
            parts = held[1]["data"]["parts"]
            first = steps[0]
            first["meta"] = {**first.get("meta", {}), "parts": parts + first.get("meta", {}).get("parts", [])}
        if len(steps) == 1 and steps[0]["kind"] == "event" and steps[0].get("name") == THINKING \
                and turn is not None:
            self.pending[chain] = (turn, steps[0])
        return steps


def _keyed(rank: int, file: _File) -> Iterator[tuple[str, int, int, _Entry]]:
    """A file's entries keyed for the merge; an entry without a timestamp keeps its place."""
    stamp = ""
    for entry in file.entries:
        ts = entry.record.get("timestamp")
        stamp = readable_timestamp(ts) or stamp
        yield stamp, rank, entry.line, entry


def _fields(files: list[_File], records: list[Record]) -> Record:
    head = next(f.head for f in files if f.head is not None)
    fields: Record = {"episode_id": head.session, "agent": "claude-code"}
    version = _first(records, lambda r: r.get("version"))
    if version is not None:
        fields["agent_version"] = version
    model = _first(records, _model)
    if model is not None:
        fields["model"] = model
    stamps = [r["timestamp"] for r in records if readable_timestamp(r.get("timestamp"))]
    if stamps:
        fields["started_at"], fields["ended_at"] = stamps[0], stamps[-1]
    meta: Record = {}
    for key in ("cwd", "gitBranch", "slug"):
        value = _first(records, lambda r, key=key: r.get(key))
        if value is not None:
            meta[key] = value
    sessions = list(dict.fromkeys(
        r["sessionId"] for r in records if isinstance(r.get("sessionId"), str)))
    meta["sessions"] = sessions
    summaries = [r["summary"] for r in records if r.get("type") == "summary" and r.get("summary")]
    if summaries:
        meta["summaries"] = summaries
    fields["meta"] = meta
    return fields


def _first(records: list[Record], pick: Any) -> Any:
    return next((v for v in map(pick, records) if isinstance(v, str) and v), None)


def _model(record: Record) -> str | None:
    message = record.get("message")
    model = message.get("model") if record.get("type") == "assistant" and isinstance(message, dict) else None
    return model if isinstance(model, str) and not model.startswith("<") else None


class _Subagents:
    """Names the sub-agent of sidechain entries: the Task call whose prompt opened the chain."""

    def __init__(self) -> None:
        self.prompts: dict[str, Record] = {}
        self.chains: dict[str, Record] = {}

    def meta(self, entry: _Entry) -> Record:
        record = entry.record
        for step in entry.steps:
            args = step.get("args")
            if step["kind"] == "tool_call" and step.get("name") in SUBAGENT_TOOLS and isinstance(args, dict):
                named = {"subagent": args.get("subagent_type"), "subagent_description": args.get("description")}
                if isinstance(args.get("prompt"), str):
                    self.prompts[args["prompt"]] = {k: v for k, v in named.items() if isinstance(v, str)}
        if record.get("isSidechain") is not True:
            return {}
        parent = record.get("parentUuid")
        known = self.chains.get(parent) if isinstance(parent, str) else None
        if known is None:
            text = next((s.get("text") for s in entry.steps if s["kind"] == "user"), None)
            known = self.prompts.get(text, {}) if isinstance(text, str) else {}
        meta = {"sidechain": True, **known}
        if isinstance(record.get("agentId"), str):
            meta["agent_id"] = record["agentId"]
        if isinstance(record.get("uuid"), str):
            self.chains[record["uuid"]] = known
        return meta


# -- one entry -----------------------------------------------------------------------------


def _entry_steps(record: Record) -> list[Step]:
    """The steps of one entry, as they read without the rest of the session."""
    kind = record.get("type")
    if not isinstance(kind, str) or not kind:
        raise RecordError("the entry has no `type`")
    for key in ("sessionId", "uuid"):  # an unreadable timestamp is a NULL ts, never a bad entry
        optional_string(record.get(key), key)
    if kind == "user":
        return _user_steps(record)
    if kind == "assistant":
        return _assistant_steps(record)
    if kind == "system":
        return _system_steps(record)
    return []  # bookkeeping, or a type this adapter does not know (counted by `_read`)


def _event(event: str, data: Any) -> Step:
    step: Step = {"kind": "event", "name": event}
    if data:
        step["data"] = data
    return step


def _user_steps(record: Record) -> list[Step]:
    message = require_object(record.get("message"), "message")
    content = message.get("content")
    if record.get("isCompactSummary") is True:
        text, _ = content_text(content, "message.content")
        return [_event("compact_summary", {"text": text})]
    blocks = content if isinstance(content, list) else []
    results = [
        _result(block, record, f"message.content[{i}]")
        for i, block in enumerate(blocks) if type_of(block) in RESULT_BLOCKS
    ]
    others = [block for block in blocks if type_of(block) not in RESULT_BLOCKS]
    text, parts = content_text(content if isinstance(content, str) else others, "message.content")
    if any(type_of(part) in CALL_BLOCKS for part in parts):
        raise RecordError("message.content: a tool_use block in a user message")
    if text is None and not parts:
        return results
    return [*results, _user_text_step(text, parts, record)]


def _user_text_step(text: str | None, parts: list[Any], record: Record) -> Step:
    """A user step, or an event for what Claude Code writes in the user's name."""
    if record.get("isMeta") is True:
        return _event("meta", {"text": text})
    if text is not None:
        command = COMMAND.search(text)
        if command is not None:
            args = COMMAND_ARGS.search(text)
            data = {"command": command.group(1).strip(), "args": args.group(1) if args else ""}
            return _event("clear" if data["command"] == "/clear" else "command", data)
        if text.startswith("<local-command-stdout>"):
            return _event("command_output", {"text": text})
        if text.startswith(INTERRUPTED):
            return _event("interrupted", {"text": text})
    return message_step("user", text, parts, {})


def _result(block: Record, record: Record, where: str) -> Step:
    text, result, parts = result_content(block.get("content"), where)
    failed = block.get("is_error") is True
    step = tool_result_step(block.get("tool_use_id"), None, text, failed, None, parts, result)
    if failed:
        denied = text is not None and (text.startswith(DENIALS) or bool(DENIED_PERMISSION.match(text)))
        step["status"] = "denied" if denied else "error"
        if text:
            step["error"] = text.split("\n", 1)[0]
    outcome = record.get("toolUseResult")
    if isinstance(outcome, dict) and isinstance(outcome.get("agentId"), str):
        step["meta"] = {**step.get("meta", {}), "agent_id": outcome["agentId"]}
    return step


def _assistant_steps(record: Record) -> list[Step]:
    message = require_object(record.get("message"), "message")
    content = message.get("content")
    text, parts = content_text(content, "message.content")
    if record.get("isApiErrorMessage") is True:
        return [{"kind": "error", "text": text}] if text is not None else [{"kind": "error"}]
    if any(type_of(part) in RESULT_BLOCKS for part in parts):
        raise RecordError("message.content: a tool_result block in an assistant message")
    calls = [_call(part) for part in parts if type_of(part) in CALL_BLOCKS]
    others = [part for part in parts if type_of(part) not in CALL_BLOCKS]
    if text is None or not text.strip():
        # no text: no assistant step; its thinking goes to the next step of the model turn
        # (`_Thinking`), here the turn's first call
        if not calls:
            return [_event(THINKING, {"parts": others})] if others else []
        if others:
            calls[0]["meta"] = {**calls[0].get("meta", {}), "parts": others}
        return calls
    return assistant_turn(text, others, {}, calls)


def _call(block: Record) -> Step:
    return tool_call_step(block.get("name"), block.get("id"), block.get("input"))


def _system_steps(record: Record) -> list[Step]:
    subtype = record.get("subtype")
    content = record.get("content")
    if subtype == "compact_boundary":
        details = record.get("compactMetadata")
        data = {"content": content, **(details if isinstance(details, dict) else {})}
        return [_event("compact", {k: v for k, v in data.items() if v is not None})]
    if record.get("level") == "error" and isinstance(content, str):
        return [{"kind": "error", "text": content}]
    if isinstance(subtype, str) and subtype not in SYSTEM_EVENTS:
        return []  # harness state, or a subtype this adapter does not know
    data = {"content": content, "level": record.get("level")}
    return [_event(subtype if isinstance(subtype, str) and subtype else "system",
                   {k: v for k, v in data.items() if v is not None})]

