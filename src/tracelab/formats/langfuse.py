"""Langfuse trace exports (`langfuse`): traces with their observations.

A trace is ``{id, name, timestamp, input, output, userId, sessionId, tags, release,
version, metadata, observations: [...]}``, as Langfuse's public API returns one trace
(`GET /api/public/traces/{id}`); each observation is ``{id, type, name, startTime,
endTime, parentObservationId, input, output, level, statusMessage, model, metadata}``
with `type` `GENERATION`, `SPAN`, `EVENT`, or one of the newer `TOOL`, `AGENT`,
`CHAIN`, `RETRIEVER`, `EMBEDDING`, `EVALUATOR`, `GUARDRAIL`. One trace per line, or a
`.json` array of traces (or a `{"data": [...]}` page of them).
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from tracelab.formats.base import Quarantined
from tracelab.formats.episodes import (
    LABEL_KEYS,
    build_episode,
    label_fields,
    message_step,
    readable_timestamp,
    tool_call_step,
    tool_result_step,
)
from tracelab.formats.observed import Requests, message, message_steps, messages, text_of
from tracelab.formats.records import first_record, map_items, records
from tracelab.formats.source import Source
from tracelab.formats.values import Record, RecordError, Step, optional_string, require_list, require_object

name = "langfuse"
summary = "Langfuse trace exports: {id, name, input, output, observations: [...]} per trace"
maps = (
    "episode = a trace: id -> episode_id, name -> agent, release -> agent_version, timestamp "
    "-> started_at, latest observation end -> ended_at, userId -> principal.user_id, tags, "
    "metadata (case_id, model, ... by the common rules), sessionId/version/metadata -> meta. "
    "Observations by startTime: GENERATION -> the first one's input messages as system/user "
    "steps (later ones add only user messages beyond the previous one's), output (a string, "
    "a message, or a list of them) -> assistant step, its tool_calls -> tool_call steps only "
    "when no tool observation records them; level ERROR -> error step (statusMessage); "
    "first model -> model. TOOL observations, and a SPAN named like a call the model asked "
    "for -> tool_call (name, input as args, id) + tool_result at endTime (output text or "
    "result; level ERROR -> status error, statusMessage as error). SPAN, EVENT and the other "
    "types -> event step (name, data: input/output). Without generations the trace's input "
    "and output give the user and assistant steps"
    "; a trace whose observations are ids only is quarantined: 'observations are ids only: "
    "export the trace with its observations'"
)
unknown = (
    "tool definitions (tools_declared = false) and effects; denied calls (Langfuse records a "
    "level, not a refusal); termination; traces exported without their observations (only "
    "ids) are quarantined"
)

OBSERVATION_TYPES = frozenset({
    "GENERATION", "SPAN", "EVENT", "TOOL", "AGENT", "CHAIN", "RETRIEVER", "EMBEDDING",
    "EVALUATOR", "GUARDRAIL",
})
TRACE_KEYS = ("id", "name", "timestamp", "input", "output", "userId", "tags", "release",
              "observations", "metadata")


IDS_ONLY = "observations are ids only: export the trace with its observations"


def has_markers(record: Any) -> bool:
    """A trace whose `observations` list holds an observation of a Langfuse type (or is
    empty, with the trace's own `timestamp`)."""
    if not isinstance(record, dict) or not isinstance(record.get("observations"), list):
        return False
    observations = record["observations"]
    if not observations or _ids_only(observations):  # a trace listed without its observations
        return "timestamp" in record and "id" in record
    return isinstance(observations[0], dict) and _is_type(observations[0].get("type"))


def _ids_only(observations: list[Any]) -> bool:
    """Observations as the trace list returns them: their ids, not the observations."""
    return bool(observations) and all(isinstance(o, str) for o in observations)


def _is_type(value: Any) -> bool:
    return isinstance(value, str) and value in OBSERVATION_TYPES


def claims(source: Source) -> bool:
    """A first record (line, or `.json` element, or the first trace of a `{data: [...]}` page)
    that is a trace (`has_markers`)."""
    record = first_record(source)
    if isinstance(record, dict) and isinstance(record.get("data"), list) and record["data"]:
        record = record["data"][0]
    return has_markers(record)


def episodes(source: Source) -> Iterator[tuple[int, dict[str, Any]] | Quarantined]:
    """One episode per trace; a trace that cannot be read is quarantined."""
    return map_items(_traces(source), source, to_episode)


def _traces(source: Source) -> Iterator[Any]:
    for item in records(source):
        if isinstance(item, Quarantined) or not isinstance(item[1], dict) or "observations" in item[1]:
            yield item
            continue
        line, page, _ = item
        if isinstance(page.get("data"), list):  # an API page: its traces, numbered from 1
            for position, trace in enumerate(page["data"], start=1):
                yield position, trace, None
        else:
            yield item


def to_episode(record: Any, source: Source, line: int) -> Record:
    """The native episode of one trace."""
    trace = require_object(record, "the trace")
    if not isinstance(trace.get("id"), str) or not trace["id"]:
        raise RecordError("the trace has no string `id`")
    if isinstance(trace.get("observations"), list) and _ids_only(trace["observations"]):
        raise RecordError(IDS_ONLY)
    observations = [
        require_object(o, f"observations[{i}]")
        for i, o in enumerate(require_list(trace.get("observations"), "observations"))
    ]
    newer: list[str] = []
    for index, observation in enumerate(observations):
        kind = observation.get("type")
        if not isinstance(kind, str):
            raise RecordError(f"observations[{index}]: type is not a string (a Langfuse observation type)")
        if not _is_type(kind):
            newer.append(kind)
        for key in ("id", "name"):
            optional_string(observation.get(key), f"observations[{index}].{key}")
    for kind in newer:  # a newer observation type: counted, not read
        source.unread[f"observation:{kind}"] += 1
    observations = [o for o in observations if _is_type(o.get("type"))]
    ordered = sorted(enumerate(observations), key=lambda p: (_text(p[1].get("startTime")), p[0]))
    steps = _steps([o for _, o in ordered], trace)
    return build_episode(_fields(trace, observations), steps, None)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _steps(observations: list[Record], trace: Record) -> list[Step]:
    generations = [o for o in observations if o.get("type") == "GENERATION"]
    asked = {c["name"] for g in generations for c in _output(g.get("output"))[1] if isinstance(c["name"], str)}
    tools = [(i, o.get("id"), o.get("name")) for i, o in enumerate(observations) if _is_tool(o, asked)]
    tool_positions = {i for i, _, _ in tools}
    requests = Requests(tools)
    steps: list[Step] = []
    if not generations:
        steps.extend(_trace_steps(trace))
    seen = 0
    for index, observation in enumerate(observations):
        kind = observation.get("type")
        start, end = observation.get("startTime"), observation.get("endTime")
        if kind == "GENERATION":
            given = messages(observation.get("input")) if isinstance(observation.get("input"), list) \
                else messages([observation.get("input")])
            fresh = given if seen == 0 else [m for m in given[seen:] if m.role == "user"]
            for found in fresh:
                steps.extend(_stamp(s, start) for s in message_steps(found))
            seen = len(given) + 1
            answer, calls = _output(observation.get("output"))
            turn = (message_steps(answer) if answer is not None else []) + requests.unrecorded(index, calls)
            steps.extend(_stamp(s, end) for s in turn)
            if observation.get("level") == "ERROR":
                steps.append(_stamp({"kind": "error", "text": _status(observation)}, end))
        elif index in tool_positions:
            steps.extend(_tool_steps(observation))
        else:
            data = {k: observation[k] for k in ("input", "output") if observation.get(k) is not None}
            step: Step = {"kind": "event", "name": observation.get("name") or str(kind).lower()}
            if data:
                step["data"] = data
            steps.append(_stamp(step, start))
    return steps


def _is_tool(observation: Record, asked: set[Any]) -> bool:
    """A TOOL observation, or a span named like a tool call a generation asked for (SDKs before
    the TOOL type recorded tool executions as spans)."""
    kind = observation.get("type")
    return kind == "TOOL" or (kind == "SPAN" and observation.get("name") in asked)


def _output(output: Any) -> tuple[Any, list[Record]]:
    """A generation's answer (a message) and the tool calls it asks for."""
    if isinstance(output, list):
        found = [m for m in messages(output) if m.role == "assistant"]
        answer = found[-1] if found else None
    elif isinstance(output, dict) and "choices" in output and isinstance(output["choices"], list) \
            and output["choices"] and isinstance(output["choices"][0], dict):
        answer = message(output["choices"][0].get("message"))
    else:
        answer = message(output)
    if answer is None:
        return None, []
    answer.role = "assistant"
    return answer, answer.calls


def _tool_steps(observation: Record) -> list[Step]:
    tool, call_id = observation.get("name"), observation.get("id")
    metadata = observation["metadata"] if isinstance(observation.get("metadata"), dict) else {}
    if isinstance(metadata.get("tool_call_id"), str):
        call_id = metadata["tool_call_id"]
    call = _stamp(tool_call_step(tool, call_id, observation.get("input")), observation.get("startTime"))
    output = observation.get("output")
    text = output if isinstance(output, str) else text_of(output)
    failed = observation.get("level") == "ERROR"
    result = tool_result_step(call_id, tool, text, failed, _status(observation) if failed else None,
                              None, None if text is not None else output)
    return [call, _stamp(result, observation.get("endTime"))]


def _status(observation: Record) -> str | None:
    message_text = observation.get("statusMessage")
    return message_text if isinstance(message_text, str) and message_text else None


def _trace_steps(trace: Record) -> list[Step]:
    steps = []
    question, answer = text_of(trace.get("input")), text_of(trace.get("output"))
    if question is not None:
        steps.append(_stamp(message_step("user", question, [], {}), trace.get("timestamp")))
    if answer is not None:
        steps.append(message_step("assistant", answer, [], {}))
    return steps


def _stamp(step: Step, ts: Any) -> Step:
    if readable_timestamp(ts):
        step["ts"] = ts
    return step


def _fields(trace: Record, observations: list[Record]) -> Record:
    metadata = trace["metadata"] if isinstance(trace.get("metadata"), dict) else {}
    fields = label_fields(trace, metadata)
    fields["episode_id"] = trace["id"]
    if isinstance(trace.get("name"), str):
        fields.setdefault("agent", trace["name"])
    if isinstance(trace.get("release"), str):
        fields.setdefault("agent_version", trace["release"])
    if readable_timestamp(trace.get("timestamp")):
        fields["started_at"] = trace["timestamp"]
    ends = [o["endTime"] for o in observations if readable_timestamp(o.get("endTime"))]
    if ends:
        fields["ended_at"] = max(ends)
    model = next((o["model"] for o in observations
                  if o.get("type") == "GENERATION" and isinstance(o.get("model"), str)), None)
    if model is not None:
        fields.setdefault("model", model)
    if isinstance(trace.get("userId"), str) and "principal" not in fields:
        fields["principal"] = {"user_id": trace["userId"]}
    meta = {k: v for k, v in trace.items()
            if k not in (*TRACE_KEYS, *LABEL_KEYS) and v is not None}
    if metadata:
        meta["metadata"] = metadata
    if meta:
        fields["meta"] = meta
    return fields
