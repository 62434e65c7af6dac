"""ATIF, the Agent Trajectory Interchange Format of Harbor (`atif`).

One trajectory per episode: a `.json` file holding one trajectory (or an array
of them), or JSON Lines with one trajectory per line. A step's `source` is
`system`, `user` or `agent`; an agent step is one assistant turn: its
`message`, then its `tool_calls`, then the `observation.results` that came back.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from tracelab.formats.base import Quarantined
from tracelab.formats.episodes import (
    assistant_turn,
    build_episode,
    content_text,
    label_fields,
    message_step,
    result_content,
    result_failed,
    tool_call_step,
    tool_definition,
    tool_result_step,
)
from tracelab.formats.records import first_record, map_records
from tracelab.formats.source import Source
from tracelab.formats.values import Record, RecordError, Step, require_list, require_object, rest

name = "atif"
summary = "ATIF trajectories (Harbor): {schema_version: ATIF-v1.x, session_id, agent, steps}"
maps = (
    "episode_id = trajectory_id, else session_id; agent.name/version/model_name -> agent, "
    "agent_version, model (else the first agent step's model_name); case_id = prompt_id; "
    "reward = total_reward; termination from status (COMPLETED -> completed, FAILED -> error); "
    "other labels from extra.*; steps: system/user -> system/user, agent -> assistant (message) "
    "+ tool_call per tool_calls[] (tool_call_id, function_name, arguments) + tool_result per "
    "observation.results[] (source_call_id, content; error when is_error is true); "
    "agent.tool_definitions -> definitions; step timestamps -> ts, first/last -> started/ended"
)
unknown = (
    "tool errors and denials (ATIF records no status: results are ok unless a writer adds "
    "is_error); tool definitions before ATIF-v1.5 (tools_declared = false); effects; "
    "principal; reasoning_content, metrics and token ids are kept in step meta only"
)

SOURCES = ("system", "user", "agent")
ROOT_MAPPED = ("agent", "steps", "prompt_id", "total_reward", "status")
ID_KEYS = ("trajectory_id", "session_id")
"""`episode_id` is the first of these present (ATIF-v1.7 segments share a session_id)."""
STEP_MAPPED = ("source", "message", "tool_calls", "observation", "timestamp")
STATUS_TERMINATIONS = {"COMPLETED": "completed", "FAILED": "error"}


def _is_trajectory(record: Any) -> bool:
    return isinstance(record, dict) and str(record.get("schema_version", "")).startswith("ATIF")


def claims(source: Source) -> bool:
    """A first record (line, document or array element) whose schema_version starts with ATIF."""
    return _is_trajectory(first_record(source))


def episodes(source: Source) -> Iterator[tuple[int, dict[str, Any]] | Quarantined]:
    """One episode per trajectory; a record that is not one is quarantined."""
    return map_records(source, to_episode)


def to_episode(record: Any, source: Source, line: int) -> Record:
    """The native episode of one ATIF trajectory."""
    record = require_object(record, "the trajectory")
    raw_steps = require_list(record.get("steps"), "steps")
    agent = require_object(record.get("agent") or {}, "agent")
    steps = [
        step
        for index, raw in enumerate(raw_steps)
        for step in _steps(require_object(raw, f"steps[{index}]"), f"steps[{index}]")
    ]
    fields = _fields(record, agent, raw_steps, source, line)
    return build_episode(fields, steps, _tools(agent))


def _fields(record: Record, agent: Record, raw_steps: list[Any], source: Source,
            line: int) -> Record:
    extra = record["extra"] if isinstance(record.get("extra"), dict) else {}
    id_key = next((key for key in ID_KEYS if record.get(key)), None)
    episode_id = record[id_key] if id_key else f"{source.content_hash[:16]}:{line}"
    fields: Record = {"episode_id": episode_id}
    fields.update(label_fields(
        {
            "agent": agent.get("name"),
            "agent_version": agent.get("version"),
            "model": agent.get("model_name") or _first_model(raw_steps),
            "case_id": record.get("prompt_id"),
            "reward": record.get("total_reward"),
            "termination": _termination(record.get("status")),
        },
        extra,
    ))
    stamps = [s.get("timestamp") for s in raw_steps if isinstance(s, dict) and s.get("timestamp")]
    if stamps:
        fields["started_at"], fields["ended_at"] = stamps[0], stamps[-1]
    meta = rest(record, (*ROOT_MAPPED, id_key))
    agent_rest = rest(agent, ("name", "version", "model_name", "tool_definitions"))
    if agent_rest:
        meta["agent"] = agent_rest
    if meta:
        fields["meta"] = meta
    return fields


def _first_model(raw_steps: list[Any]) -> Any:
    return next(
        (s["model_name"] for s in raw_steps if isinstance(s, dict) and s.get("model_name")), None
    )


def _termination(status: Any) -> Any:
    if not isinstance(status, str):
        return status
    return STATUS_TERMINATIONS.get(status.upper(), status.lower())


def _steps(step: Record, where: str) -> list[Step]:
    source = step.get("source")
    if source not in SOURCES:
        raise RecordError(f"{where}: source {source!r} is not system, user or agent")
    text, parts = content_text(step.get("message"), f"{where}.message")
    extra = rest(step, STEP_MAPPED)
    if source == "agent":
        calls = _calls(step, where)
        steps = assistant_turn(text, parts, extra, calls)
    else:
        steps = [message_step(source, text, parts, extra)]
    names = {
        c["call_id"]: c.get("name")
        for c in steps if c["kind"] == "tool_call" and isinstance(c.get("call_id"), str)
    }
    steps.extend(_observations(step, source, names, where))
    if isinstance(step.get("timestamp"), str):
        for out in steps:
            out["ts"] = step["timestamp"]
    return steps


def _calls(step: Record, where: str) -> list[Step]:
    calls = require_list(step.get("tool_calls") or [], f"{where}.tool_calls")
    out = []
    for index, call in enumerate(calls):
        call = require_object(call, f"{where}.tool_calls[{index}]")
        out.append(tool_call_step(
            call.get("function_name"), call.get("tool_call_id"), call.get("arguments"),
            rest(call, ("function_name", "tool_call_id", "arguments")),
        ))
    return out


def _observations(step: Record, source: str, names: dict[Any, Any], where: str) -> list[Step]:
    """Results: a `tool_result` each, except results of system/user steps naming no call."""
    observation = step.get("observation")
    if observation is None:
        return []
    at = f"{where}.observation.results"
    results = require_list(require_object(observation, f"{where}.observation").get("results"), at)
    out: list[Step] = []
    for index, result in enumerate(results):
        result = require_object(result, f"{at}[{index}]")
        call_id = result.get("source_call_id")
        if call_id is None and source != "agent":
            out.append({"kind": "event", "name": "observation", "data": result})
            continue
        text, value, parts = result_content(result.get("content"), f"{at}[{index}].content")
        name = names.get(call_id) if isinstance(call_id, str) else None
        out.append(tool_result_step(
            call_id, name, text, result_failed(result), result.get("error"),
            parts, value,
        ))
        meta = rest(result, ("source_call_id", "content", "is_error", "error"))
        if meta:
            out[-1]["meta"] = {**out[-1].get("meta", {}), **meta}
    return out


def _tools(agent: Record) -> list[Record] | None:
    """`agent.tool_definitions` (ATIF-v1.5+), flat or OpenAI-style; None when absent."""
    definitions = agent.get("tool_definitions")
    if definitions is None:
        return None
    out = []
    for index, tool in enumerate(require_list(definitions, "agent.tool_definitions")):
        tool = require_object(tool, f"agent.tool_definitions[{index}]")
        function = tool["function"] if isinstance(tool.get("function"), dict) else tool
        out.append(tool_definition(
            function.get("name"), function.get("description"), function.get("parameters"),
            function, tool,
        ))
    return out
