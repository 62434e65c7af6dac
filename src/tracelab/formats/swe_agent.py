"""SWE-agent trajectories (`swe-agent`): one `.traj` file, one JSON object, one episode.

A `.traj` holds `trajectory` (one entry per executed action: `thought`,
`action`, `observation`, `execution_time`, `state`), `history` (the chat
messages the model saw) and `info` (`exit_status`, `submission`,
`model_stats`). The trajectory is the record of what ran, so it gives the
tool calls; history gives only the opening system and user messages (its
later messages repeat the trajectory as the model saw it, and demonstration
runs are edited). A file without a trajectory is read from its history alone.

SWE-agent actions are command lines, not structured calls: each becomes a
`tool_call` named by its first word (``edit``, ``open``, ``python``,
``submit``) with ``args = {"action": <the whole action string>}``.
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
    tool_call_step,
    tool_result_step,
)
from tracelab.formats.records import map_items
from tracelab.formats.source import BadJSON, Source, parse_json
from tracelab.formats.values import Record, RecordError, Step, require_list, require_object, rest

name = "swe-agent"
summary = "SWE-agent .traj files: {trajectory, history, info, replay_config?}, one run per file"
maps = (
    "trajectory[]: thought -> assistant; action -> tool_call named by its first word, "
    "args = {\"action\": <whole action string>}; observation -> tool_result (execution_time -> "
    "duration_ms, state -> meta), status error when the edit linter rejected the edit "
    "(`Your proposed edit has introduced new syntax error(s)`); history before the first "
    "assistant message -> system/user steps (demonstrations -> system, meta.is_demo); without a "
    "trajectory, history gives every step (tool_calls ids -> call_id); info.exit_status -> "
    "termination; replay_config.agent.model.name -> model; replay_config.problem_statement.id, "
    "else the file name without .traj -> case_id; info (model_stats, submission), environment, "
    "replay_config -> meta"
)
unknown = (
    "tool definitions (the agent may run any shell command, so no closed tool list exists: "
    "tools_declared = false; the command docs are prose in the system prompt); exit codes "
    "(a command that ran is ok whatever it printed); timestamps; agent; a trajectory entry's "
    "`response` and `messages` (the raw completion and the model's context, which repeat "
    "thought, action and earlier observations) are not kept"
)

SUFFIX = ".traj"
REJECTED_EDIT = "Your proposed edit has introduced new syntax error(s)"
"""How SWE-agent's edit linter reports an edit it refused to apply."""
ENTRY_MAPPED = ("thought", "action", "observation", "execution_time", "response", "messages")
MESSAGE_MAPPED = ("role", "content", "thought", "action", "tool_calls", "tool_call_ids")


def claims(source: Source) -> bool:
    """A `.traj` file (optionally compressed): the extension SWE-agent writes trajectories to."""
    return source.stem_name.endswith(SUFFIX)


def episodes(source: Source) -> Iterator[tuple[int, dict[str, Any]] | Quarantined]:
    """The file's one episode (line 1), or one quarantined record."""
    return map_items(_document(source), source, to_episode)


def _document(source: Source) -> Iterator[tuple[int, Any, bytes] | Quarantined]:
    raw = source.read_all()
    try:
        yield 1, parse_json(raw), raw
    except BadJSON as exc:
        yield Quarantined(1, str(exc), raw)


def to_episode(record: Any, source: Source, line: int) -> Record:
    """The native episode of one trajectory file."""
    record = require_object(record, "the .traj file")
    if "trajectory" not in record and "history" not in record:
        raise RecordError("not a SWE-agent trajectory: no `trajectory` or `history`")
    trajectory = require_list(record.get("trajectory") or [], "trajectory")
    history = require_list(record.get("history") or [], "history")
    if trajectory:
        first_assistant = next(
            (i for i, m in enumerate(history) if isinstance(m, dict) and m.get("role") == "assistant"),
            len(history),
        )
        steps = _history_steps(history[:first_assistant])
        for index, entry in enumerate(trajectory):
            where = f"trajectory[{index}]"
            steps.extend(_entry_steps(require_object(entry, where), where))
    else:
        steps = _history_steps(history)
    fields = episode_fields(record, source, line, ("trajectory", "history"))
    fields.update(_labels(record, source))
    return build_episode(fields, steps, None)


def _labels(record: Record, source: Source) -> Record:
    info = record["info"] if isinstance(record.get("info"), dict) else {}
    config = _replay_config(record.get("replay_config"))
    agent = config["agent"] if isinstance(config.get("agent"), dict) else {}
    model = agent["model"] if isinstance(agent.get("model"), dict) else {}
    problem = config.get("problem_statement")
    problem = problem if isinstance(problem, dict) else {}
    labels: Record = {"case_id": problem.get("id") or source.stem_name[: -len(SUFFIX)]}
    if info.get("exit_status") is not None:
        labels["termination"] = info["exit_status"]
    if model.get("name") is not None:
        labels["model"] = model["name"]
    return labels


def _replay_config(value: Any) -> Record:
    """`replay_config` as an object (older SWE-agent versions store it as a JSON string)."""
    if isinstance(value, str):
        try:
            value = parse_json(value)
        except BadJSON:
            return {}
    return value if isinstance(value, dict) else {}


def command_name(action: str) -> str | None:
    """The tool name of an action: its first word (``edit 1:2\\n...`` -> ``edit``)."""
    words = action.split(maxsplit=1)
    return words[0] if words else None


def _call(action: Any, where: str, call_id: Any = None) -> Step:
    if not isinstance(action, str):
        raise RecordError(f"{where}.action must be a string")
    return tool_call_step(command_name(action), call_id, {"action": action})


def _result(observation: Any, name: str | None, where: str, call_id: Any = None) -> Step:
    text, parts = content_text(observation, where)
    if text is not None and text.startswith(REJECTED_EDIT):
        return tool_result_step(call_id, name, text, True, text.splitlines()[0], parts)
    return tool_result_step(call_id, name, text, False, None, parts)


def _entry_steps(entry: Record, where: str) -> list[Step]:
    """A trajectory entry: assistant (its thought), the action's call, the observation."""
    call = _call(entry.get("action"), where)
    result = _result(entry.get("observation"), call.get("name"), f"{where}.observation")
    seconds = entry.get("execution_time")
    if isinstance(seconds, (int, float)) and not isinstance(seconds, bool):
        result["duration_ms"] = seconds * 1000
    extra = rest(entry, ENTRY_MAPPED)
    if extra:
        result["meta"] = {**result.get("meta", {}), **extra}
    thought = entry.get("thought")
    text = thought if isinstance(thought, str) and thought.strip() else None
    return [*assistant_turn(text, [], {}, [call]), result]


def _history_steps(history: list[Any]) -> list[Step]:
    """History messages; an assistant `action` is a call, and a tool message (or the user
    message right after the call, where observations are user messages) is a result."""
    steps: list[Step] = []
    pending: Step | None = None
    for index, message in enumerate(history):
        where = f"history[{index}]"
        message = require_object(message, where)
        role = message.get("role")
        if role == "assistant":
            steps.extend(_assistant(message, where))
            pending = steps[-1] if steps and steps[-1]["kind"] == "tool_call" else None
        elif role == "tool" or (role == "user" and pending is not None):
            ids = message.get("tool_call_ids")
            call_id = ids[0] if isinstance(ids, list) and ids else None
            name = pending.get("name") if pending is not None else None
            steps.append(_result(message.get("content"), name, f"{where}.content", call_id))
            pending = None
        elif role in ("system", "user"):
            text, parts = content_text(message.get("content"), where)
            kind = "system" if role == "system" or message.get("is_demo") is True else "user"
            steps.append(message_step(kind, text, parts, rest(message, ("role", "content"))))
        else:
            raise RecordError(f"{where}: unexpected role {role!r}")
    return steps


def _assistant(message: Record, where: str) -> list[Step]:
    thought = message.get("thought")
    parts: list[Any]
    if isinstance(thought, str):
        text, parts = (thought if thought.strip() else None), []
    else:
        text, parts = content_text(message.get("content"), where)
    calls = []
    if message.get("action") is not None:
        tool_calls = message.get("tool_calls")
        first = tool_calls[0] if isinstance(tool_calls, list) and tool_calls else {}
        call_id = first.get("id") if isinstance(first, dict) else None
        calls.append(_call(message["action"], where, call_id))
    return assistant_turn(text, parts, rest(message, MESSAGE_MAPPED), calls)
