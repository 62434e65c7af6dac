"""Assay trace V2 (`assay`): the streamed JSON Lines of the Assay agent-trace tool.

Each line is one event of an episode, keyed by `episode_id`: `episode_start`
(`timestamp` in ms, `input` {prompt}, `meta`), `step` (`step_id`, `kind`,
`name`, `content`, `meta`), `tool_call` (`step_id`, `call_index`, `tool_name`,
`args`, `result`, `error`) and `episode_end` (`outcome`, `final_output`).
Episodes may interleave. An episode is yielded at its `episode_end` (or at the
end of the file when it never ended), numbered by its `episode_start` line.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from tracelab.formats.base import Quarantined
from tracelab.formats.episodes import (
    LABEL_KEYS,
    build_episode,
    label_fields,
    message_step,
    tool_call_step,
    tool_result_step,
)
from tracelab.formats.source import BadJSON, Source, parse_json
from tracelab.formats.values import Record, RecordError, Step, rest

name = "assay"
summary = "Assay trace V2: JSON Lines of episode_start / step / tool_call / episode_end events"
maps = (
    "episode_start: episode_id, input.prompt -> user step, timestamp (ms) -> started_at, "
    "meta -> case_id (meta.case_id, else meta.test_id), agent, model, ... (the rest to meta); "
    "step: kind user/system -> that step, any other kind -> assistant (content, or the "
    "`completion` of JSON content {prompt, completion, model} / meta gen_ai.completion); "
    "tool_call: tool_call (tool_name, args, call_id <step_id>-<call_index>) and, when it "
    "recorded a result or error, its tool_result (status error on error); episode_end: "
    "ended_at, outcome -> meta.outcome (termination error when outcome is error, else "
    "completed), final_output -> the last assistant step"
)
unknown = (
    "tool definitions (tools_declared = false); denied calls (Assay records only errors); "
    "effects; principal; reward (pass/fail outcome is a label, kept in meta); termination "
    "of an episode with no episode_end; Assay V1 lines (type assay.trace) are quarantined"
)

EVENT_TYPES = ("episode_start", "step", "tool_call", "episode_end")
MESSAGE_KINDS = ("user", "system")
MODEL_META_KEYS = ("gen_ai.request.model", "gen_ai.response.model")
MAX_MILLIS = 253_402_300_800_000  # 10000-01-01T00:00:00Z, beyond what datetime can hold


def claims(source: Source) -> bool:
    """JSON Lines whose first record is an Assay V2 event with an `episode_id`."""
    record = source.first_record()
    return (
        isinstance(record, dict)
        and record.get("type") in EVENT_TYPES
        and isinstance(record.get("episode_id"), str)
    )


def episodes(source: Source) -> Iterator[tuple[int, dict[str, Any]] | Quarantined]:
    """Episodes assembled from their events; a line that belongs to none is quarantined."""
    open_episodes: dict[str, _Episode] = {}
    for line, raw in source.lines():
        try:
            event = parse_json(raw)
        except BadJSON as exc:
            yield Quarantined(line, str(exc), raw)
            continue
        problem = _problem(event)
        if problem is not None:
            yield Quarantined(line, problem, raw)
            continue
        episode_id, kind = event["episode_id"], event["type"]
        episode = open_episodes.get(episode_id)
        if kind == "episode_start":
            if episode is not None:
                yield Quarantined(line, f"episode_start of {episode_id!r} while the one started "
                                  f"at line {episode.line} has not ended", raw)
            else:
                open_episodes[episode_id] = _Episode(line, raw, event)
        elif episode is None:
            yield Quarantined(line, f"{kind} of episode {episode_id!r} with no open "
                              "episode_start before it", raw)
        else:
            episode.events.append((line, raw, event))
            if kind == "episode_end":
                yield open_episodes.pop(episode_id).finish()
    for episode in open_episodes.values():
        yield episode.finish()


def _problem(event: Any) -> str | None:
    if not isinstance(event, dict):
        return "not a JSON object"
    if event.get("type") == "assay.trace":
        return "an Assay V1 trace line (type assay.trace); only V2 events are read"
    if event.get("type") not in EVENT_TYPES:
        return f"type {event.get('type')!r} is not episode_start, step, tool_call or episode_end"
    if not isinstance(event.get("episode_id"), str) or not event["episode_id"]:
        return "episode_id is not a non-empty string"
    return None


@dataclass
class _Episode:
    """The events of one episode, from its `episode_start` on."""

    line: int
    raw: bytes
    start: Record
    events: list[tuple[int, bytes, Record]] = field(default_factory=list)

    def finish(self) -> tuple[int, Record] | Quarantined:
        try:
            return self.line, self._episode()
        except _BadEvent as exc:
            return Quarantined(self.line, f"line {exc.line}: {exc.reason}", exc.raw)
        except RecordError as exc:
            return Quarantined(self.line, str(exc), self.raw)

    def _episode(self) -> Record:
        meta_in = self.start.get("meta")
        if meta_in is not None and not isinstance(meta_in, dict):
            raise RecordError("episode_start: meta is not an object")
        meta_in = meta_in or {}
        fields = label_fields(meta_in, {"case_id": meta_in.get("test_id")})
        fields["episode_id"] = self.start["episode_id"]
        fields["started_at"] = _iso(self.start.get("timestamp"), "episode_start")
        meta = rest(meta_in, LABEL_KEYS)
        steps = self._input_steps(meta, fields["started_at"])
        for line, raw, event in self.events:
            try:
                if event["type"] == "episode_end":
                    _end(event, steps, fields, meta)
                else:
                    steps.extend(_event_steps(event, steps, fields))
            except RecordError as exc:
                raise _BadEvent(line, str(exc), raw) from None
        if meta:
            fields["meta"] = meta
        return build_episode({k: v for k, v in fields.items() if v is not None}, steps, None)

    def _input_steps(self, meta: Record, ts: str | None) -> list[Step]:
        """The user step of `input.prompt` (or of a string input); other inputs go to meta."""
        given = self.start.get("input")
        prompt = given.get("prompt") if isinstance(given, dict) else given
        if isinstance(prompt, str):
            step: Step = {"kind": "user", "text": prompt}
            return [{**step, "ts": ts} if ts else step]
        if given is not None:
            meta["input"] = given
        return []



class _BadEvent(Exception):
    def __init__(self, line: int, reason: str, raw: bytes) -> None:
        super().__init__(reason)
        self.line, self.reason, self.raw = line, reason, raw


def _end(end: Record, steps: list[Step], fields: Record, meta: Record) -> None:
    """`episode_end`: ended_at, termination, the outcome label, and the final output.

    A `final_output` that is not already the last assistant step's text becomes the
    last assistant step, so that `output` (the last step's text) is that answer.
    """
    fields["ended_at"] = _iso(end.get("timestamp"), "episode_end")
    outcome = end.get("outcome")
    fields["termination"] = fields.get("termination") or (
        "error" if outcome == "error" else "completed"
    )
    if outcome is not None:
        meta["outcome"] = outcome
    final = end.get("final_output")
    last = steps[-1] if steps else {}
    if isinstance(final, str) and (last.get("kind"), last.get("text")) != ("assistant", final):
        step: Step = {"kind": "assistant", "text": final, "meta": {"from": "episode_end.final_output"}}
        if fields["ended_at"]:
            step["ts"] = fields["ended_at"]
        steps.append(step)


def _event_steps(event: Record, steps: list[Step], fields: Record) -> list[Step]:
    ts = _iso(event.get("timestamp"), event["type"])
    out = _tool_steps(event) if event["type"] == "tool_call" else _step(event, steps, fields)
    for step in out:
        if ts is not None:
            step["ts"] = ts
    return out


def _step(event: Record, steps: list[Step], fields: Record) -> list[Step]:
    content = event.get("content")
    if content is not None and not isinstance(content, str):
        raise RecordError("step: content is not a string")
    kind = event.get("kind")
    extra = rest(event, ("type", "episode_id", "timestamp", "content"))
    if kind in MESSAGE_KINDS:
        return [message_step(kind, content, [], extra)]
    prompt, text, model = _model_content(content, event.get("meta"))
    if model is not None and fields.get("model") is None:
        fields["model"] = model
    out: list[Step] = []
    if prompt is not None and not any(s["kind"] == "user" for s in steps):
        out.append({"kind": "user", "text": prompt})
    if text:
        out.append(message_step("assistant", text, [], extra))
    return out


def _model_content(content: str | None, meta: Any) -> tuple[str | None, str | None, str | None]:
    """``(prompt, completion, model)`` of a model step, as Assay's own replay reads them.

    JSON content ``{"prompt", "completion", "model"}`` gives all three; plain
    content is the completion. The step's meta `gen_ai.prompt`,
    `gen_ai.completion` and `gen_ai.request.model` take precedence.
    """
    prompt, text, model = None, content, None
    try:
        parsed = parse_json(content) if content else None
    except BadJSON:
        parsed = None
    if isinstance(parsed, dict) and isinstance(parsed.get("completion"), str):
        text = parsed["completion"]
        prompt = parsed.get("prompt") if isinstance(parsed.get("prompt"), str) else None
        model = parsed.get("model") if isinstance(parsed.get("model"), str) else None
    meta = meta if isinstance(meta, dict) else {}
    if isinstance(meta.get("gen_ai.prompt"), str):
        prompt = meta["gen_ai.prompt"]
    if isinstance(meta.get("gen_ai.completion"), str):
        text = meta["gen_ai.completion"]
    model = next((meta[k] for k in MODEL_META_KEYS if isinstance(meta.get(k), str)), model)
    return prompt, text, model


def _tool_steps(event: Record) -> list[Step]:
    tool = event.get("tool_name")
    if not isinstance(tool, str) or not tool:
        raise RecordError("tool_call: tool_name is not a non-empty string")
    call_id = f"{event.get('step_id')}-{event.get('call_index') or 0}"
    meta = rest(event, ("type", "episode_id", "timestamp", "tool_name", "args", "result", "error"))
    steps = [tool_call_step(tool, call_id, event.get("args"), meta)]
    result, error = event.get("result"), event.get("error")
    if result is not None or error is not None:
        text = result if isinstance(result, str) else None
        value = None if isinstance(result, str) else result
        steps.append(tool_result_step(call_id, tool, text, error is not None, error, None, value))
    return steps


def _iso(millis: Any, where: str) -> str | None:
    """A timestamp in milliseconds since the epoch as ISO-8601 UTC; None when absent."""
    if millis is None:
        return None
    if isinstance(millis, bool) or not isinstance(millis, (int, float)) or millis < 0:
        raise RecordError(f"{where}: timestamp is not a number of milliseconds")
    if millis >= MAX_MILLIS:
        raise RecordError(f"{where}: timestamp {millis!r} ms is after the year 9999")
    moment = datetime.fromtimestamp(millis / 1000, tz=timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
