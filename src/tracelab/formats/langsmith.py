"""LangSmith run exports (`langsmith`): runs as the LangSmith API returns them.

A run is ``{id, name, run_type, trace_id, parent_run_id, dotted_order, start_time,
end_time, inputs, outputs, error, status, extra, tags, ...}``; `run_type` is `llm`,
`chain`, `tool`, `retriever`, `prompt`, `parser` or `embedding`. An export is JSON
Lines of runs (what `list_runs` yields, one run per line, in any order) or a `.json`
array of them; a run may also nest its children in `child_runs` (what `read_run(...,
load_child_runs=True)` returns). The runs of one trace make one episode, yielded at the
end of the file in the order their first run appeared.
"""
from __future__ import annotations

import functools
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from tracelab.errors import DataError
from tracelab.formats.base import Quarantined
from tracelab.formats.episodes import (
    build_episode,
    message_step,
    readable_timestamp,
    tool_call_step,
    tool_result_step,
)
from tracelab.formats.observed import Requests, message, message_steps, messages, text_of
from tracelab.formats.records import first_record, raw_json, records
from tracelab.formats.source import Source, display_path
from tracelab.formats.values import Record, RecordError, Step, json_text

name = "langsmith"
summary = "LangSmith run exports: runs {id, run_type, trace_id, parent_run_id, inputs, outputs, ...}"
maps = (
    "episode = the runs of one trace_id (nested child_runs included), ordered by dotted_order, "
    "else start_time; episode_id = trace_id; the root run (no parent_run_id): name -> agent, "
    "start/end_time -> started_at/ended_at, error -> error + termination error (status success "
    "-> completed), reference_example_id -> case_id, tags, extra.metadata/session_id/status -> "
    "meta. llm runs: the first one's input messages (OpenAI {role, content}, LangChain "
    "{type, content} or serialized lc constructors) -> system/user steps, later ones add only "
    "user messages beyond the previous run's; outputs (generations, choices, message) -> "
    "assistant step; their tool_calls -> tool_call steps only when no tool run records them "
    "(by call id, else the next tool run of that name); model from "
    "extra.invocation_params.model / model_name or metadata.ls_model_name. tool runs -> "
    "tool_call (name, inputs as args, call id from the ToolMessage or metadata, else the run "
    "id) + tool_result at end_time (outputs.output text or outputs as result; error -> status "
    "error). Without llm runs the root's inputs/outputs give the user and assistant steps"
    "; a runs query page {runs: [...], cursors} is read like an array; the runs of one trace "
    "in several export files of one folder (pages) are one episode, each run once by id (a "
    "run repeated with other content: the trace is quarantined naming both files); unreadable"
    " timestamps -> NULL"
)
unknown = (
    "tool definitions (runs rarely keep them: tools_declared = false) and effects; denied "
    "calls (LangSmith records only errors); chain, prompt, parser and embedding runs below the "
    "root give no step; retriever runs give an event step (their documents as data)"
)

RUN_TYPES = ("llm", "chain", "tool", "retriever", "prompt", "parser", "embedding")
MODEL_KEYS = ("model", "model_name")


def has_markers(record: Any) -> bool:
    """A run: a known `run_type` and one of `trace_id`, `parent_run_id`, `dotted_order`,
    `child_runs` (what a run tree has and no message log does)."""
    return (
        isinstance(record, dict)
        and record.get("run_type") in RUN_TYPES
        and any(key in record for key in ("trace_id", "parent_run_id", "dotted_order", "child_runs"))
    )


def claims(source: Source) -> bool:
    """A first record (line, or `.json` array element, or the first run of a runs query page
    ``{"runs": [...], "cursors": ...}``) that is a run (`has_markers`)."""
    record = first_record(source)
    if _is_page(record):
        record = record["runs"][0] if record["runs"] else None
    return has_markers(record)


def _is_page(record: Any) -> bool:
    """A page of the runs query API: ``{"runs": [...], "cursors": ...}``, read like an array."""
    return isinstance(record, dict) and isinstance(record.get("runs"), list) and "run_type" not in record


def _runs(source: Source) -> Iterator[tuple[int, Any, bytes | str | None] | Quarantined]:
    """`records`, with the runs of a page as records of their own (numbered from 1)."""
    for item in records(source):
        if not isinstance(item, Quarantined) and _is_page(item[1]):
            for position, run in enumerate(item[1]["runs"], start=1):
                yield position, run, raw_json(run)
        else:
            yield item


def episodes(source: Source) -> Iterator[tuple[int, dict[str, Any]] | Quarantined]:
    """The traces of the file, each once all its runs are read; a bad run is quarantined.

    A trace whose runs are also in other export files of the same folder (pages of one
    export) is one episode of all its runs, the same whichever of the files it is read from:
    ingest stores it once and skips it as identical for the other files.
    """
    read = _read(source)
    yield from read.bad
    elsewhere = _elsewhere(source, set(read.traces))
    for key, trace in read.traces.items():
        files = elsewhere.get(key)
        try:
            if files:
                own = os.path.abspath(source.location)
                trace = _merged(key, {own: trace, **{p: _read_other(p).get(key, []) for p in files}})
            yield read.lines[key], _episode(key, trace)
        except RecordError as exc:
            yield Quarantined(read.lines[key], f"trace {json_text(key)[:80]}: {exc}", None)


@dataclass(frozen=True)
class _Read:
    """A file's runs by trace (``(position, line, run)``), each trace's first line, its bad records."""

    traces: dict[Any, list[tuple[int, int, Record]]]
    lines: dict[Any, int]
    bad: list[Quarantined]


def _read(source: Source) -> _Read:
    traces: dict[Any, list[tuple[int, int, Record]]] = {}
    lines: dict[Any, int] = {}
    bad: list[Quarantined] = []
    keys: dict[Any, Any] = {}  # run id -> trace key, for runs without trace_id
    position = 0
    for item in _runs(source):
        if isinstance(item, Quarantined):
            bad.append(item)
            continue
        line, record, raw = item
        runs = _flatten(record) if isinstance(record, dict) else [record]
        problem = next(filter(None, map(_problem, runs)), None)
        if problem is not None:
            bad.append(Quarantined(line, problem, raw))
            continue
        for run in runs:
            if run["run_type"] not in RUN_TYPES:  # a newer run type: kept in its trace, gives no step
                source.unread[f"run_type:{run['run_type']}"] += 1
            key = _trace_key(run, keys)
            keys[run.get("id")] = key
            traces.setdefault(key, []).append((position, line, run))
            lines.setdefault(key, line)
            position += 1
    return _Read(traces, lines, bad)


# -- pages of one trace in several files ---------------------------------------------------------


def _elsewhere(source: Source, wanted: set[Any]) -> dict[Any, list[str]]:
    """The other export files of the source's folder that hold runs of its traces, by trace."""
    folder = os.path.dirname(os.path.abspath(source.location))
    try:
        mtime = os.stat(folder).st_mtime_ns
    except OSError:
        return {}
    found: dict[Any, list[str]] = {}
    own = os.path.abspath(source.location)
    for path, keys in _folder_traces(folder, mtime).items():
        if path != own:
            for key in keys & wanted:
                found.setdefault(key, []).append(path)
    return found


@functools.lru_cache(maxsize=4)
def _folder_traces(folder: str, mtime_ns: int) -> dict[str, frozenset[Any]]:
    """The trace keys of every LangSmith export file of a folder (cached while it is unchanged)."""
    traces = {}
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return {}
    for name in names:
        path = os.path.join(folder, name)
        if not os.path.isfile(path) or not Source(path).stem_name.endswith((".json", ".jsonl")):
            continue
        try:
            if claims(Source(path)):
                traces[path] = frozenset(_read_other(path))
        except (DataError, OSError):  # an unreadable neighbour is reported when it is ingested itself
            continue
    return traces


def _read_other(path: str) -> dict[Any, list[tuple[int, int, Record]]]:
    """Another export file's runs by trace (the last few read are kept while unchanged)."""
    try:
        info = os.stat(path)
    except OSError:
        return {}
    return _read_cached(path, info.st_mtime_ns, info.st_size)


@functools.lru_cache(maxsize=8)
def _read_cached(path: str, mtime_ns: int, size: int) -> dict[Any, list[tuple[int, int, Record]]]:
    try:
        return _read(Source(path)).traces
    except (DataError, OSError):
        return {}


def _merged(key: Any, by_file: dict[str, list[tuple[int, int, Record]]]) -> list[tuple[int, int, Record]]:
    """One trace's runs from several files, files in path order, each run once by id.

    A run id found in two files with different content is a conflict: a file can claim another
    export's trace, so the trace is not stored (`RecordError` naming both files)."""
    seen: dict[Any, tuple[str, Record]] = {}
    merged: list[tuple[int, int, Record]] = []
    for path in sorted(by_file):
        for _, line, run in by_file[path]:
            earlier = seen.get(run["id"])
            if earlier is not None:
                if earlier[1] != run:
                    raise RecordError(f"a run of this trace is in {display_path(earlier[0])} and "
                                      f"{display_path(path)} with different content; neither file's "
                                      "version is kept")
                continue
            seen[run["id"]] = (path, run)
            merged.append((len(merged), line, run))
    return merged


def _problem(record: Any) -> str | None:
    if not isinstance(record, dict):
        return "not a JSON object"
    if not isinstance(record.get("run_type"), str):
        return f"run_type is not a string (one of {', '.join(RUN_TYPES)})"
    if not _is_id(record.get("id")):
        return "the run has no `id` (a string or a number)"
    for key in ("trace_id", "parent_run_id"):
        if record.get(key) is not None and not _is_id(record[key]):
            return f"{key} is not a string or a number"
    return None


def _is_id(value: Any) -> bool:
    return isinstance(value, (str, int)) and not isinstance(value, bool)


def _flatten(run: Record) -> list[Record]:
    """A run and its nested `child_runs`, parents first (children get their parent's trace)."""
    out, stack = [], [run]
    while stack:
        current = stack.pop()
        out.append(current)
        children = current.get("child_runs")
        if isinstance(children, list):
            kids = [dict(c, parent_run_id=c.get("parent_run_id") or current.get("id"),
                         trace_id=c.get("trace_id") or current.get("trace_id"))
                    for c in children if isinstance(c, dict)]
            stack.extend(reversed(kids))
    return out


def _trace_key(run: Record, keys: dict[Any, Any]) -> Any:
    trace = run.get("trace_id")
    if _is_id(trace):
        return trace
    parent = run.get("parent_run_id")
    return run.get("id") if not _is_id(parent) else keys.get(parent, parent)


def _order(entry: tuple[int, int, Record]) -> tuple[str, str, int]:
    position, _, run = entry
    dotted, start = run.get("dotted_order"), run.get("start_time")
    return (dotted if isinstance(dotted, str) else "", start if isinstance(start, str) else "",
            position)


def _episode(key: Any, entries: list[tuple[int, int, Record]]) -> Record:
    ordered = sorted(entries, key=_order)
    runs = [run for _, _, run in ordered]
    root = next((run for run in runs if run.get("parent_run_id") is None), runs[0])
    tool_runs = [(i, _tool_call_id(run), run.get("name"))
                 for i, run in enumerate(runs) if run.get("run_type") == "tool"]
    requests = Requests(tool_runs)
    steps: list[Step] = []
    seen = 0  # input messages of the previous llm run, plus its output
    llm_runs = [run for run in runs if run.get("run_type") == "llm"]
    if not llm_runs:
        steps.extend(_root_steps(root))
    for index, run in enumerate(runs):
        kind = run.get("run_type")
        if kind == "llm":
            given = _input_messages(run.get("inputs"))
            fresh = given if seen == 0 else [m for m in given[seen:] if m.role == "user"]
            for found in fresh:
                steps.extend(_stamped(message_steps(found), run.get("start_time")))
            seen = len(given) + 1
            output = _output_message(run.get("outputs"))
            if output is not None:
                turn = message_steps(output) + requests.unrecorded(index, output.calls)
                steps.extend(_stamped(turn, run.get("end_time")))
            if run.get("error") is not None:
                steps.append(_stamp({"kind": "error", "text": _error(run)}, run.get("end_time")))
        elif kind == "tool":
            steps.extend(_tool_steps(run))
        elif kind == "retriever" and run is not root:
            data = {"inputs": run.get("inputs"), "outputs": run.get("outputs")}
            steps.append(_stamp({"kind": "event", "name": run.get("name") or "retriever",
                                 "data": data}, run.get("start_time")))
    return build_episode(_fields(key, root, runs), steps, None)


def _root_steps(root: Record) -> list[Step]:
    steps = []
    text = text_of(root.get("inputs"))
    if text is not None:
        steps.append(_stamp(message_step("user", text, [], {}), root.get("start_time")))
    answer = text_of(root.get("outputs"))
    if answer is not None:
        steps.append(_stamp(message_step("assistant", answer, [], {}), root.get("end_time")))
    return steps


def _input_messages(inputs: Any) -> list[Any]:
    if not isinstance(inputs, dict):
        return messages([inputs]) if isinstance(inputs, str) else []
    if "messages" in inputs:
        return messages(inputs["messages"])
    prompts = inputs.get("prompts")
    if isinstance(prompts, list):
        return messages([p for p in prompts if isinstance(p, str)][:1])
    text = text_of(inputs)
    return messages([text]) if text is not None else []


def _output_message(outputs: Any) -> Any:
    """The assistant message of an llm run's outputs: LangChain generations, OpenAI choices,
    a `message`, or a plain `output` / `text`."""
    if not isinstance(outputs, dict):
        found = message(outputs) if isinstance(outputs, str) else None
        return _as_assistant(found)
    generations = outputs.get("generations")
    if isinstance(generations, list) and generations:
        first = generations[0][0] if isinstance(generations[0], list) and generations[0] else generations[0]
        if isinstance(first, dict):
            return _as_assistant(message(first.get("message")) or message(first.get("text")))
    choices = outputs.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        return _as_assistant(message(choices[0].get("message")))
    for key in ("message", "output", "text", "content"):
        if key in outputs:
            return _as_assistant(message(outputs[key]))
    return None


def _as_assistant(found: Any) -> Any:
    if found is not None:
        found.role = "assistant"
    return found


def _tool_call_id(run: Record) -> Any:
    outputs = run["outputs"] if isinstance(run.get("outputs"), dict) else {}
    output = outputs.get("output")
    message = output.get("kwargs") if isinstance(output, dict) and "kwargs" in output else output
    extra = run["extra"] if isinstance(run.get("extra"), dict) else {}
    holders = [outputs, message, run.get("inputs"), extra.get("metadata")]
    for holder in holders:
        if isinstance(holder, dict) and isinstance(holder.get("tool_call_id"), str):
            return holder["tool_call_id"]
    return None


def _tool_steps(run: Record) -> list[Step]:
    call_id = _tool_call_id(run) or run.get("id")
    tool = run.get("name")
    call = _stamp(tool_call_step(tool, call_id, run.get("inputs")), run.get("start_time"))
    outputs = run.get("outputs")
    output = outputs.get("output", outputs) if isinstance(outputs, dict) else outputs
    text = text_of(output) if not isinstance(output, str) else output
    if isinstance(output, dict) and isinstance(output.get("kwargs"), dict):
        text = text_of(output["kwargs"].get("content"))
    value = None if text is not None or output is None else output
    failed = run.get("error") is not None
    result = tool_result_step(call_id, tool, text, failed, _error(run) if failed else None, None, value)
    return [call, _stamp(result, run.get("end_time"))]


def _error(run: Record) -> str:
    error = run.get("error")
    return error.strip().split("\n")[-1] if isinstance(error, str) and error.strip() else json_text(error)


def _stamp(step: Step, ts: Any) -> Step:
    if readable_timestamp(ts):
        step["ts"] = ts
    return step


def _stamped(steps: list[Step], ts: Any) -> list[Step]:
    return [_stamp(step, ts) for step in steps]


def _fields(key: Any, root: Record, runs: list[Record]) -> Record:
    fields: Record = {"episode_id": key if isinstance(key, str) else json_text(key)}
    if isinstance(root.get("name"), str):
        fields["agent"] = root["name"]
    model = next(filter(None, map(_model, runs)), None)
    if model is not None:
        fields["model"] = model
    for source, target in (("start_time", "started_at"), ("end_time", "ended_at"),
                           ("reference_example_id", "case_id")):
        value = root.get(source)
        if isinstance(value, str) and value and (target == "case_id" or readable_timestamp(value)):
            fields[target] = value
    if root.get("error") is not None:
        fields["error"] = _error(root)
        fields["termination"] = "error"
    elif root.get("status") == "success":
        fields["termination"] = "completed"
    tags = root.get("tags")
    if isinstance(tags, list) and tags and all(isinstance(t, str) for t in tags):
        fields["tags"] = tags
    extra = root["extra"] if isinstance(root.get("extra"), dict) else {}
    meta = {k: v for k, v in (("metadata", extra.get("metadata")), ("session_id", root.get("session_id")),
                              ("status", root.get("status")), ("root_run_id", root.get("id")))
            if v is not None}
    if meta:
        fields["meta"] = meta
    return fields


def _model(run: Record) -> str | None:
    if run.get("run_type") != "llm" or not isinstance(run.get("extra"), dict):
        return None
    params = run["extra"].get("invocation_params")
    params = params if isinstance(params, dict) else {}
    metadata = run["extra"].get("metadata") if isinstance(run["extra"].get("metadata"), dict) else {}
    found = [params.get(k) for k in MODEL_KEYS] + [metadata.get("ls_model_name")]
    return next((m for m in found if isinstance(m, str) and m), None)
