"""Span traces to episodes: the engine the span formats share (`otlp`, `openinference`).

An adapter decodes each record of its file into `Span` summaries (ids, times,
status, and only the attributes that become steps or episode fields). One
episode's spans may arrive in several records (a trace exported in batches),
so the engine reads the file twice: first to learn, from ids and line numbers
only, the line where each episode ends; then to hold each episode's summaries
from its first line to its last, where it is built. Memory follows the
episodes open at once (a file exporter writes a trace's spans close
together), not the file. Episodes are grouped and ordered thus (docs/formats.md,
OTLP):

- an episode is all spans sharing a conversation id (a span without one joins
  the conversation of its trace), else all spans of one trace;
- spans are ordered by start time, ties broken by span id; each span
  contributes its steps at its start and a tool result at its end;
- inference spans repeat the history in their input messages, so each adds
  only the inputs beyond the previous inference span's input plus output count;
- a tool-call (or tool-response) message part becomes a step only when no tool
  span records that call, so a call is never read twice.

Messages are given in the shape of the OTel GenAI conventions:
``{"role": ..., "parts": [{"type": "text", "content": ...}, {"type": "tool_call",
"id", "name", "arguments"}, {"type": "tool_call_response", "id", "response"}, ...]}``.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import heapq
import itertools
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from tracelab.errors import DataError
from tracelab.formats.base import Quarantined
from tracelab.formats.episodes import (
    assistant_turn,
    build_episode,
    content_text,
    message_step,
    tool_call_step,
    tool_result_step,
)
from tracelab.formats.records import raw_json, records
from tracelab.formats.source import Source
from tracelab.formats.values import Record, RecordError, Step, optional_string, require_list, require_object
from tracelab.native_keys import CALL_STEP

TOOL = "tool"
INFERENCE = "inference"
OTHER = "other"

ROLE_KINDS = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "assistant": "assistant",
    "model": "assistant",
    "tool": "tool",
    "function": "tool",
}
"""Message roles of the span formats and the steps they give (tool: results)."""

MAX_NANOS = 253_402_300_800 * 10**9  # 10000-01-01T00:00:00Z


@dataclass(slots=True)
class Span:
    """What one span contributes to its episode, decoded by an adapter."""

    line: int
    trace_id: str
    span_id: str
    parent_id: str | None
    start: int
    """Nanoseconds since the Unix epoch."""
    end: int
    role: str = OTHER
    """`TOOL` (a tool execution), `INFERENCE` (a model call) or `OTHER`."""
    failed: bool = False
    error: str | None = None
    conversation_id: str | None = None
    labels: Record = field(default_factory=dict)
    """Episode fields this span names (`case_id`, `agent`, ...); the first span wins."""
    meta: Record = field(default_factory=dict)
    """Episode `meta` keys this span names; the first span wins."""
    model: str | None = None
    tools: list[Record] | None = None
    """Native tool definitions offered (None: the span lists none)."""
    tool_name: Any = None
    call_id: Any = None
    args: Any = None
    result: Any = None
    call_meta: Record = field(default_factory=dict)
    system: str | None = None
    """System instructions given apart from the input messages."""
    inputs: list[Record] = field(default_factory=list)
    outputs: list[Record] = field(default_factory=list)
    problem: str | None = None
    """Why this span's content cannot be read; its episode is quarantined."""
    raw: bytes | None = None


class SpanLineError(RecordError):
    """A record whose spans cannot be placed (bad ids or times).

    `traces` are the trace ids it names, so their episodes, which lack its
    spans, are quarantined too rather than loaded incomplete.
    """

    def __init__(self, reason: str, traces: Iterable[str] = ()) -> None:
        super().__init__(reason)
        self.traces = tuple(traces)


Decoder = Callable[[Any, int], list[Span]]


# -- reading a file ------------------------------------------------------------------------


def span_episodes(
    source: Source, decode: Decoder, locate: Decoder, *, match_by_name: bool
) -> Iterator[tuple[int, Record] | Quarantined]:
    """Every episode of a span file, and every quarantined record, in line order.

    ``decode(record, line)`` turns one record into spans or raises
    `RecordError`; ``locate(record, line)`` does the same reading only what
    places a span (ids, times, conversation id), and must fail exactly where
    `decode` does. An episode is reported at the line of its first span;
    episodes and quarantined records are yielded in order of that line (ties:
    quarantined records first, then episodes by their first span's start and
    id). With `match_by_name`, a tool span without a call id records the
    earliest still-unrecorded requested call of the same name (OpenInference).

    The file is read twice, so that memory follows the episodes open at once,
    not the file: the first pass (`locate`) finds the last line of every
    episode and the traces of quarantined records; the second (`decode`) holds
    an episode's spans only until its last line, where the episode is built.
    """
    plan = _plan(source, locate)
    open_groups: dict[str, _Group] = {}
    waiting = _Waiting()
    for item in records(source):
        if isinstance(item, Quarantined):
            line = item.line
            waiting.add(item)
        else:
            line, record, raw = item
            try:
                decoded = decode(record, line)
            except RecordError as exc:
                waiting.add(Quarantined(line, str(exc), raw))
                decoded = []
            for key in _gather(decoded, plan, open_groups, source):
                if plan.last_line[key] == line:
                    spans = open_groups.pop(key).ordered()
                    waiting.add(_episode_or_quarantine(key, spans, plan.tainted, match_by_name), spans[0])
        # An open episode sorts at or after its first line, one still to come after this line.
        yield from waiting.release(next(iter(open_groups.values())).first_line if open_groups else line + 1)
    if open_groups:
        raise _changed(source)
    yield from waiting.release(None)


def _changed(source: Source) -> DataError:
    return DataError(f"{source.uri}: changed while it was read; nothing of it was loaded")


class _Waiting:
    """Built episodes and quarantined records, yielded in line order once nothing can precede them.

    Ties on a line: quarantined records first, then episodes by their first span's start and id.
    """

    def __init__(self) -> None:
        self.heap: list[tuple[tuple[int, int, int, str, int], tuple[int, Record] | Quarantined]] = []
        self.sequence = itertools.count()

    def add(self, item: tuple[int, Record] | Quarantined, first: Span | None = None) -> None:
        """Queue `item`; `first` is the first span of an episode's (built or quarantined)."""
        after = (1, first.start, first.span_id) if first is not None else (0, 0, "")
        heapq.heappush(self.heap, ((_line(item), *after, next(self.sequence)), item))

    def release(self, before: int | None) -> Iterator[tuple[int, Record] | Quarantined]:
        """The items on lines before `before` (None: all of them), in order."""
        while self.heap and (before is None or self.heap[0][0][0] < before):
            yield heapq.heappop(self.heap)[1]


@dataclass
class _Plan:
    """What the first pass learns: ids and line numbers only."""

    last_line: dict[str, int]
    """Episode key -> the last line holding one of its spans."""
    conversation: dict[str, str]
    """Trace id -> the conversation its spans without a conversation id join."""
    tainted: dict[str, int]
    """Trace id -> the first quarantined record naming it."""

    def key(self, span: Span) -> str:
        """The episode of a span: its conversation, else its trace's, else its trace."""
        return span.conversation_id or self.conversation.get(span.trace_id) or span.trace_id


def _plan(source: Source, locate: Decoder) -> _Plan:
    tainted: dict[str, int] = {}
    # a trace joins the conversation of its earliest span (by start, then span id) naming one
    earliest: dict[str, tuple[int, str, str]] = {}
    last_line: dict[str, int] = {}
    unlabelled: dict[str, int] = {}  # trace -> last line of its spans naming no conversation
    for item in records(source):
        if isinstance(item, Quarantined):
            continue
        line, record, _ = item
        try:
            located = locate(record, line)
        except SpanLineError as exc:
            for trace in exc.traces:
                tainted.setdefault(trace, line)
            continue
        except RecordError:
            continue
        for span in located:
            if span.conversation_id:
                last_line[span.conversation_id] = line
                best = earliest.get(span.trace_id)
                if best is None or (span.start, span.span_id) < best[:2]:
                    earliest[span.trace_id] = (span.start, span.span_id, span.conversation_id)
            else:
                unlabelled[span.trace_id] = line
    conversation = {trace: best[2] for trace, best in earliest.items()}
    for trace, line in unlabelled.items():
        key = conversation.get(trace, trace)
        last_line[key] = max(last_line.get(key, 0), line)
    return _Plan(last_line, conversation, tainted)


def _gather(
    spans: list[Span], plan: _Plan, open_groups: dict[str, _Group], source: Source
) -> dict[str, None]:
    """Add each span to its episode's open group; the keys touched, in order."""
    touched: dict[str, None] = {}
    for span in spans:
        key = plan.key(span)
        if key not in plan.last_line:
            raise _changed(source)
        group = open_groups.get(key)
        if group is None:
            group = open_groups[key] = _Group(span.line)
        group.add(span)
        touched[key] = None
    return touched


class _Group:
    """The spans of one episode read so far."""

    def __init__(self, first_line: int) -> None:
        self.first_line = first_line
        self.spans: list[Span] = []
        # Inference spans repeat the whole history as input: one object per distinct message
        # keeps memory to the distinct messages.
        self.messages: dict[bytes, Any] = {}

    def add(self, span: Span) -> None:
        span.inputs = [self._intern(message) for message in span.inputs]
        span.outputs = [self._intern(message) for message in span.outputs]
        self.spans.append(span)

    def _intern(self, message: Any) -> Any:
        try:
            text = orjson.dumps(message, option=orjson.OPT_SORT_KEYS)
        except TypeError:
            return message
        return self.messages.setdefault(hashlib.blake2b(text, digest_size=16).digest(), message)

    def ordered(self) -> list[Span]:
        """The spans by start time, ties by span id; a span re-exported (same trace and span
        id) counts once, as its first copy in that order."""
        ordered: list[Span] = []
        seen: set[tuple[str, str]] = set()
        for span in sorted(self.spans, key=lambda span: (span.start, span.span_id)):
            if (span.trace_id, span.span_id) not in seen:
                seen.add((span.trace_id, span.span_id))
                ordered.append(span)
        return ordered


def _line(item: tuple[int, Record] | Quarantined) -> int:
    return item.line if isinstance(item, Quarantined) else item[0]


def _episode_or_quarantine(
    key: str, spans: list[Span], tainted: dict[str, int], match_by_name: bool
) -> tuple[int, Record] | Quarantined:
    line = min(span.line for span in spans)
    for span in spans:
        if span.trace_id in tainted:
            return Quarantined(
                line,
                f"episode {key}: trace {span.trace_id} also has spans on line "
                f"{tainted[span.trace_id]}, which was quarantined; not loaded incomplete",
            )
    broken = next((span for span in spans if span.problem), None)
    if broken is not None:
        return Quarantined(line, f"episode {key}: {broken.problem}", broken.raw)
    try:
        return line, episode(key, spans, match_by_name)
    except RecordError as exc:
        return Quarantined(line, f"episode {key}: {exc}")


# -- one episode ---------------------------------------------------------------------------


def episode(key: str, spans: list[Span], match_by_name: bool = False) -> Record:
    """The native episode of one group of ordered spans (see the module docstring)."""
    fields: Record = {"episode_id": key}
    for span in spans:
        for name, value in span.labels.items():
            fields.setdefault(name, value)
    model = next((s.model for s in spans if s.role == INFERENCE and s.model), None)
    if model is not None:
        fields["model"] = model
    fields["started_at"] = iso(min(span.start for span in spans))
    fields["ended_at"] = iso(max(span.end for span in spans))
    roots = [span for span in spans if span.parent_id is None]
    if roots and roots[-1].failed and roots[-1].error is not None:
        fields["error"] = roots[-1].error
    meta = _meta(key, spans)
    if meta:
        fields["meta"] = meta
    return build_episode(fields, _Walk(spans, match_by_name).steps(), _tools(spans))


def _meta(key: str, spans: list[Span]) -> Record:
    meta: Record = {}
    for span in spans:
        for name, value in span.meta.items():
            meta.setdefault(name, value)
    traces = list(dict.fromkeys(span.trace_id for span in spans))
    if traces != [key]:
        meta["trace_ids"] = traces
    return meta


def _tools(spans: list[Span]) -> list[Record] | None:
    """The union by name of every span's definitions, in order of first appearance."""
    declared = [span.tools for span in spans if span.tools is not None]
    if not declared:
        return None
    union: dict[Any, Record] = {}
    for tools in declared:
        for tool in tools:
            union.setdefault(tool.get("name"), tool)
    return list(union.values())


def _pair_own(steps: list[Step], own: list[tuple[Step, Step]]) -> None:
    """Mark each tool span's result with the position of the span's own call, where the
    sequential rule of docs/trace-format.md §2 could pair it otherwise: a call id that several tool
    spans share (docs/formats.md: a span's result pairs with that span's own call)."""
    shared = Counter(call.get("call_id") for call, _ in own)
    if all(n == 1 for n in shared.values()):
        return
    position = {id(step): index for index, step in enumerate(steps)}
    for call, result in own:
        if shared[call.get("call_id")] > 1:
            result[CALL_STEP] = position[id(call)]


class _Walk:
    """Turns an episode's ordered spans into its steps."""

    def __init__(self, spans: list[Span], match_by_name: bool) -> None:
        self.spans = spans
        self.call_ids, self.recorded_parts = _recorded_calls(spans, match_by_name)
        # a call id taken from a matched part may be any JSON value; `_recorded` quarantines it
        self.recorded_ids = {cid for cid in self.call_ids.values() if isinstance(cid, str) and cid}
        self.previous: tuple[int, int] | None = None
        self.system: str | None = None

    def steps(self) -> list[Step]:
        timeline: list[tuple[tuple[int, int, str, int], list[Step]]] = []
        own: list[tuple[Step, Step]] = []
        for span in self.spans:
            if span.role == TOOL:
                call, result = self._call(span), self._result(span)
                own.append((call, result))
                timeline.append(((span.start, 1, span.span_id, 0), [call]))
                # A result sorts before steps starting at the same time, but after its own call.
                if span.end > span.start:
                    at = (span.end, 0, span.span_id, 0)
                else:
                    at = (span.start, 1, span.span_id, 1)
                timeline.append((at, [result]))
            elif span.role == INFERENCE:
                timeline.append(((span.start, 1, span.span_id, 0), self._inference(span)))
        timeline.sort(key=lambda item: item[0])
        steps = [step for _, steps in timeline for step in steps]
        _pair_own(steps, own)
        return steps

    def _call(self, span: Span) -> Step:
        meta = {"span_id": span.span_id, **span.call_meta}
        step = tool_call_step(span.tool_name, self.call_ids[span.span_id], span.args, meta)
        step["ts"] = iso(span.start)
        return step

    def _result(self, span: Span) -> Step:
        text = span.result if isinstance(span.result, str) else None
        result = None if isinstance(span.result, str) else span.result
        error = span.error if span.failed else None
        step = tool_result_step(
            self.call_ids[span.span_id], span.tool_name, text, span.failed, error, None, result
        )
        step["ts"] = iso(span.end)
        step["duration_ms"] = (span.end - span.start) / 1e6
        step.setdefault("meta", {})["span_id"] = span.span_id
        return step

    def _inference(self, span: Span) -> list[Step]:
        steps: list[Step] = []
        if span.system is not None and span.system != self.system:
            steps.append(message_step("system", span.system, [], {}))
            self.system = span.system
        skip = sum(self.previous) if self.previous is not None else 0
        for index, message in enumerate(span.inputs[skip:], start=skip):
            steps.extend(self._message(message, f"span {span.span_id} input message {index}"))
        _stamp(steps, span)
        outputs: list[Step] = []
        for index, message in enumerate(span.outputs):
            where = f"span {span.span_id} output message {index}"
            outputs.extend(self._message(message, where))
        for step in outputs:
            step["ts"] = iso(span.end)
            step.setdefault("meta", {})["span_id"] = span.span_id
        self.previous = (len(span.inputs), len(span.outputs))
        return steps + outputs

    def _recorded(self, part: Record, where: str) -> bool:
        """True when a tool span records this call (or response) part; its id must be a string."""
        part_id = optional_string(part.get("id"), f"{where}.id")
        return id(part) in self.recorded_parts or (bool(part_id) and part_id in self.recorded_ids)

    def _message(self, message: Any, where: str) -> list[Step]:
        message = require_object(message, where)
        role = message.get("role")
        kind = ROLE_KINDS.get(role) if isinstance(role, str) else None
        if kind is None:
            raise RecordError(
                f"{where}: unknown role {role!r} (expected system, developer, user, assistant, "
                "model, tool or function)"
            )
        pieces: list[Any] = []
        calls: list[Step] = []
        results: list[Step] = []
        for index, part in enumerate(require_list(message.get("parts", []), f"{where}.parts")):
            ptype = part.get("type") if isinstance(part, dict) else None
            if ptype == "tool_call":
                if not self._recorded(part, f"{where}.parts[{index}]"):
                    calls.append(
                        tool_call_step(part.get("name"), part.get("id"), part.get("arguments"))
                    )
            elif ptype == "tool_call_response":
                if not self._recorded(part, f"{where}.parts[{index}]"):
                    results.append(_response(part))
            else:
                pieces.append(_text_piece(part))
        text, others = content_text(pieces, where)
        if kind == "assistant":
            return assistant_turn(text, others, {}, calls) + results
        if kind == "tool":
            if text is not None or others:
                results.append(tool_result_step(None, None, text, False, parts=others))
            return calls + results
        said = [message_step(kind, text, others, {})] if text is not None or others else []
        return results + said + calls


def _stamp(steps: list[Step], span: Span) -> None:
    for step in steps:
        step["ts"] = iso(span.start)
        step.setdefault("meta", {})["span_id"] = span.span_id


def _response(part: Record) -> Step:
    """A tool-call-response part as a `tool_result`: a string is its text, else its result."""
    response = part.get("response", part.get("result"))
    text = response if isinstance(response, str) else None
    result = None if isinstance(response, str) else response
    return tool_result_step(part.get("id"), part.get("name"), text, False, result=result)


def _recorded_calls(
    spans: list[Span], match_by_name: bool
) -> tuple[dict[str, Any], set[int]]:
    """Each tool span's call id, and the requested tool-call parts that tool spans record.

    A tool span records the requested call with its own call id; without one
    (and with `match_by_name`), the earliest still-unrecorded requested call of
    the same name, whose id it then takes.
    """
    call_ids: dict[str, Any] = {}
    recorded: set[int] = set()
    requested: list[Record] = []
    for span in spans:
        if span.role == INFERENCE:
            requested.extend(
                part
                for message in span.outputs
                if isinstance(message, dict) and isinstance(message.get("parts"), list)
                for part in message["parts"]
                if isinstance(part, dict) and part.get("type") == "tool_call"
            )
        elif span.role == TOOL:
            call_id = span.call_id
            if call_id:
                match = next((p for p in requested if p.get("id") == call_id), None)
            elif match_by_name:
                match = next((p for p in requested if p.get("name") == span.tool_name), None)
            else:
                match = None
            if match is not None:
                requested.remove(match)
                if match_by_name:
                    recorded.add(id(match))
                call_id = call_id or match.get("id")
            call_ids[span.span_id] = call_id
    return call_ids, recorded


def read_content(span: Span, raw: Any, fill: Callable[[], None]) -> None:
    """Run ``fill()``; a `RecordError` marks the span, so that its episode is quarantined."""
    try:
        fill()
    except RecordError as exc:
        span.problem = f"span {span.span_id} (line {span.line}): {exc}"
        span.raw = raw_json(raw)


# -- values --------------------------------------------------------------------------------


def nanos(value: Any, where: str) -> int:
    """Nanoseconds since the epoch from an integer or a string of digits (OTLP's encoding)."""
    number = digits(value) if isinstance(value, str) else value
    if isinstance(number, bool) or not isinstance(number, int) or not 0 <= number < MAX_NANOS:
        raise RecordError(f"{where} is {value!r}, not nanoseconds since the Unix epoch")
    return number


def digits(text: str) -> int | None:
    """The integer a string of decimal digits spells, else None.

    Not every character `str.isdigit` accepts is one `int` reads (``"²"``), and `int`
    reads at most 4300 digits: those strings are None too, never a `ValueError`.
    """
    if not text.isdigit():
        return None
    try:
        return int(text)
    except ValueError:
        return None


def iso(ns: int) -> str:
    """ISO-8601 UTC text of a nanosecond timestamp, to the microsecond."""
    seconds, rest = divmod(ns, 10**9)
    stamp = dt.datetime.fromtimestamp(seconds, dt.timezone.utc)
    return f"{stamp:%Y-%m-%dT%H:%M:%S}.{rest // 1000:06d}Z"


def parts_text(value: Any, where: str) -> str | None:
    """The text of a string or of a list of GenAI parts (text parts' `content`)."""
    if value is None or isinstance(value, str):
        return value
    return content_text([_text_piece(p) for p in require_list(value, where)], where)[0]


def _text_piece(part: Any) -> Any:
    """A GenAI text part as its plain string (which `content_text` reads as text), else as is."""
    if isinstance(part, dict) and part.get("type") == "text":
        content = part.get("content")
        if isinstance(content, str):
            return content
    return part
