"""OpenHands evaluation output (`openhands`): `output.jsonl`, one benchmark instance per line.

Each line is ``{instance_id, instruction, metadata, history, metrics, error,
test_result, instance}``. `history` is OpenHands' event stream: actions and
observations with `id`, `timestamp` and `source`; an observation names the
action it answers in `cause`. Events the model produced through function
calling carry ``tool_call_metadata`` (`function_name`, `tool_call_id` and the
raw `model_response`), which gives the call's name, id and arguments exactly
as the model sent them. (Older outputs store history as ``[action,
observation]`` pairs; they are read the same way.)
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from tracelab.formats.base import Quarantined
from tracelab.formats.episodes import (
    build_episode,
    content_text,
    episode_fields,
    message_step,
    tool_call_step,
    tool_list,
    tool_result_step,
)
from tracelab.formats.openai_chat import chat_tool_definition
from tracelab.formats.records import first_record, map_records
from tracelab.formats.source import Source
from tracelab.formats.values import Record, RecordError, Step, require_list, require_object

name = "openhands"
summary = "OpenHands evaluation output.jsonl: {instance_id, metadata, history (events), ...} per line"
maps = (
    "history events in order: system action -> system step (args.tools -> definitions); "
    "message action -> user or assistant step (by source); an action with tool_call_metadata -> "
    "the model's text (model_response message content, once per response) as an assistant "
    "step, then a tool_call (function_name, tool_call_id, the model's arguments); an "
    "observation with tool_call_metadata -> tool_result (content), status denied for "
    "user_rejected, error for an error observation, for success false (a non-zero exit code, "
    "kept in meta.exit_code; error = the event message) or content starting `ERROR:` "
    "(str_replace_editor); an error observation without a call -> error step; any other "
    "event (recall, state changes) -> event step (name = its type, data = args/extras); "
    "timestamp -> ts, first/last -> started_at/ended_at; instance_id -> case_id; "
    "metadata.agent_class -> agent, metadata.llm_config.model -> model, the system action's "
    "openhands_version -> agent_version; error -> termination error + error, else a finish "
    "call -> termination completed; instruction, metadata, metrics, test_result, instance -> meta"
)
unknown = (
    "effects of the tools (OpenHands does not label reads and writes); timezone of timestamps "
    "(recorded without one); per-event llm_metrics and repeated model responses are not kept; "
    "test results as a reward (the output holds the patch, not the evaluation)"
)

ERROR_PREFIX = "ERROR:"
"""How OpenHands' file editor reports a failed command (a ToolError's text)."""


def _events(history: list[Any]) -> list[Any]:
    """The event stream; older outputs pair each action with its observation."""
    return [event for item in history for event in (item if isinstance(item, list) else [item])]


def _is_output(record: Any) -> bool:
    if not isinstance(record, dict) or "instance_id" not in record:
        return False
    history = record.get("history")
    if not isinstance(history, list):
        return False
    events = _events(history)
    return not events or (
        isinstance(events[0], dict) and ("action" in events[0] or "observation" in events[0])
    )


def claims(source: Source) -> bool:
    """A first record with `instance_id` and a `history` of OpenHands events."""
    return _is_output(first_record(source))


def episodes(source: Source) -> Iterator[tuple[int, dict[str, Any]] | Quarantined]:
    """One episode per instance line; a line that is not one is quarantined."""
    return map_records(source, to_episode)


def to_episode(record: Any, source: Source, line: int) -> Record:
    """The native episode of one OpenHands instance run."""
    record = require_object(record, "the record")
    if "history" not in record:
        raise RecordError("not an OpenHands output record: no `history`")
    events = _events(require_list(record["history"], "history"))
    fields = episode_fields(record, source, line, ("history", "instance_id", "error"))
    steps: list[Step] = []
    tools: list[Record] | None = None
    seen_responses: set[str | int] = set()
    for index, event in enumerate(events):
        event = require_object(event, f"history[{index}]")
        if event.get("action") == "system":
            tools = _tools(event, f"history[{index}]")
            fields.update(_version(event))
        for step in _event_steps(event, f"history[{index}]", seen_responses):
            if isinstance(event.get("timestamp"), str):
                step["ts"] = event["timestamp"]
            steps.append(step)
    fields.update(_labels(record, events))
    return build_episode(fields, steps, tools)


def _labels(record: Record, events: list[Any]) -> Record:
    labels: Record = {}
    if record.get("instance_id") is not None:
        labels["case_id"] = record["instance_id"]
    metadata = record["metadata"] if isinstance(record.get("metadata"), dict) else {}
    if metadata.get("agent_class") is not None:
        labels["agent"] = metadata["agent_class"]
    llm = metadata["llm_config"] if isinstance(metadata.get("llm_config"), dict) else {}
    if llm.get("model") is not None:
        labels["model"] = llm["model"]
    if record.get("error") is not None:
        labels["termination"] = "error"
        labels["error"] = record["error"]
    elif any(event.get("action") == "finish" for event in events):
        labels["termination"] = "completed"
    stamps = [event["timestamp"] for event in events if isinstance(event.get("timestamp"), str)]
    if stamps:
        labels["started_at"], labels["ended_at"] = stamps[0], stamps[-1]
    return labels


def _version(event: Record) -> Record:
    args = event["args"] if isinstance(event.get("args"), dict) else {}
    version = args.get("openhands_version")
    return {"agent_version": version} if version is not None else {}


def _tools(event: Record, where: str) -> list[Record] | None:
    args = require_object(event.get("args") or {}, f"{where}.args")
    return tool_list(args, chat_tool_definition)


def _event_steps(event: Record, where: str, seen_responses: set[str | int]) -> list[Step]:
    metadata = event.get("tool_call_metadata")
    if "action" in event:
        if isinstance(metadata, dict):
            return _call_steps(event, metadata, where, seen_responses)
        return [_plain_action(event, where)]
    if "observation" in event:
        if isinstance(metadata, dict):
            return [_result(event, metadata, where)]
        if event["observation"] == "error":
            return [{"kind": "error", "text": _text(event, "content", where)}]
        return [_event(event["observation"], event.get("extras"))]
    raise RecordError(f"{where}: neither an action nor an observation")


def _plain_action(event: Record, where: str) -> Step:
    action = event["action"]
    args = event["args"] if isinstance(event.get("args"), dict) else {}
    if action == "system":
        return message_step("system", _text(args, "content", where), [], {})
    if action == "message":
        kind = "user" if event.get("source") == "user" else "assistant"
        images = args.get("image_urls")
        extra = {"image_urls": images} if images else {}
        return message_step(kind, _text(args, "content", where), [], extra)
    return _event(action, args)


def _event(kind: Any, data: Any) -> Step:
    step: Step = {"kind": "event", "name": kind}
    if data:
        step["data"] = data
    return step


def _text(holder: Record, key: str, where: str) -> str | None:
    text, _ = content_text(holder.get(key), f"{where}.{key}")
    return text


def _call_steps(
    event: Record, metadata: Record, where: str, seen_responses: set[str | int]
) -> list[Step]:
    """The model's text (once per response), then the call as the model sent it."""
    call_id = metadata.get("tool_call_id")
    message, call = _model_call(metadata, call_id)
    steps: list[Step] = []
    response_id = _response(metadata).get("id")
    if not isinstance(response_id, (str, int)):  # a list or object is no id (and not hashable)
        response_id = None
    if response_id not in seen_responses:
        if response_id is not None:
            seen_responses.add(response_id)
        text, parts = content_text(message.get("content"), f"{where}.model_response")
        if text or parts:
            steps.append(message_step("assistant", text or None, parts, {}))
    function = call["function"] if isinstance(call.get("function"), dict) else {}
    args = function["arguments"] if "arguments" in function else event.get("args")
    steps.append(tool_call_step(metadata.get("function_name"), call_id, args))
    return steps


def _response(metadata: Record) -> Record:
    response = metadata.get("model_response")
    return response if isinstance(response, dict) else {}


def _model_call(metadata: Record, call_id: Any) -> tuple[Record, Record]:
    """The response message and its tool call with `call_id` (empty when not recorded)."""
    choices = _response(metadata).get("choices")
    choice = choices[0] if isinstance(choices, list) and choices else {}
    message = choice.get("message") if isinstance(choice, dict) else None
    message = message if isinstance(message, dict) else {}
    calls = message["tool_calls"] if isinstance(message.get("tool_calls"), list) else []
    call = next((c for c in calls if isinstance(c, dict) and c.get("id") == call_id), {})
    return message, call


def _result(event: Record, metadata: Record, where: str) -> Step:
    text = _text(event, "content", where)
    status, error = _outcome(event, text)
    step = tool_result_step(
        metadata.get("tool_call_id"), metadata.get("function_name"), text, status != "ok", error
    )
    step["status"] = status
    extras = event["extras"] if isinstance(event.get("extras"), dict) else {}
    run = extras["metadata"] if isinstance(extras.get("metadata"), dict) else {}
    if run.get("exit_code") is not None:
        step["meta"] = {"exit_code": run["exit_code"]}
    return step


def _outcome(event: Record, text: str | None) -> tuple[str, Any]:
    """The result's status (`ok`, `error`, `denied`) and its error text."""
    observation = event.get("observation")
    if observation == "user_rejected":  # confirmation mode: the user refused the action
        return "denied", text
    if observation == "error":
        return "error", text
    if event.get("success") is False:  # a command that exited non-zero
        return "error", event.get("message")
    if text is not None and text.startswith(ERROR_PREFIX):
        return "error", text[len(ERROR_PREFIX):].strip()
    return "ok", None
