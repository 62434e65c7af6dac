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

from collections.abc import Iterator
from typing import Any

from tracelab.formats.base import Quarantined
from tracelab.formats.episodes import build_episode, message_step, stamp, tool_call_step, tool_result_step
from tracelab.formats.observed import Requests, message, message_steps, messages, text_of
from tracelab.formats.records import first_record, records
from tracelab.formats.source import Source
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
    """A first record (line, or `.json` array element) that is a run (`has_markers`)."""
    return has_markers(first_record(source))


def episodes(source: Source) -> Iterator[tuple[int, dict[str, Any]] | Quarantined]:
    """The traces of the file, each once all its runs are read; a bad run is quarantined."""
    traces: dict[Any, list[tuple[int, int, Record]]] = {}
    lines: dict[Any, int] = {}
    keys: dict[Any, Any] = {}  # run id -> trace key, for runs without trace_id
    position = 0
    for item in records(source):
        if isinstance(item, Quarantined):
            yield item
            continue
        line, record, raw = item
        runs = _flatten(record) if isinstance(record, dict) else [record]
        problem = next(filter(None, map(_problem, runs)), None)
        if problem is not None:
            yield Quarantined(line, problem, raw)
            continue
        for run in runs:
            key = _trace_key(run, keys)
            keys[run.get("id")] = key
            traces.setdefault(key, []).append((position, line, run))
            lines.setdefault(key, line)
            position += 1
    for key, trace in traces.items():
        try:
            yield lines[key], _episode(key, trace)
        except RecordError as exc:
            yield Quarantined(lines[key], f"trace {json_text(key)[:80]}: {exc}", None)


def _problem(record: Any) -> str | None:
    if not isinstance(record, dict):
        return "not a JSON object"
    if record.get("run_type") not in RUN_TYPES:
        return f"run_type {record.get('run_type')!r} is not one of {', '.join(RUN_TYPES)}"
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
                steps.append(stamp({"kind": "error", "text": _error(run)}, run.get("end_time")))
        elif kind == "tool":
            steps.extend(_tool_steps(run))
        elif kind == "retriever" and run is not root:
            data = {"inputs": run.get("inputs"), "outputs": run.get("outputs")}
            steps.append(stamp({"kind": "event", "name": run.get("name") or "retriever",
                                 "data": data}, run.get("start_time")))
    return build_episode(_fields(key, root, runs), steps, None)


def _root_steps(root: Record) -> list[Step]:
    steps = []
    text = text_of(root.get("inputs"))
    if text is not None:
        steps.append(stamp(message_step("user", text, [], {}), root.get("start_time")))
    answer = text_of(root.get("outputs"))
    if answer is not None:
        steps.append(stamp(message_step("assistant", answer, [], {}), root.get("end_time")))
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
    call = stamp(tool_call_step(tool, call_id, run.get("inputs")), run.get("start_time"))
    outputs = run.get("outputs")
    output = outputs.get("output", outputs) if isinstance(outputs, dict) else outputs
    text = text_of(output) if not isinstance(output, str) else output
    if isinstance(output, dict) and isinstance(output.get("kwargs"), dict):
        text = text_of(output["kwargs"].get("content"))
    value = None if text is not None or output is None else output
    failed = run.get("error") is not None
    result = tool_result_step(call_id, tool, text, failed, _error(run) if failed else None, None, value)
    return [call, stamp(result, run.get("end_time"))]


def _error(run: Record) -> str:
    error = run.get("error")
    return error.strip().split("\n")[-1] if isinstance(error, str) and error.strip() else json_text(error)


def _stamped(steps: list[Step], ts: Any) -> list[Step]:
    return [stamp(step, ts) for step in steps]


def _fields(key: Any, root: Record, runs: list[Record]) -> Record:
    fields: Record = {"episode_id": key if isinstance(key, str) else json_text(key)}
    if isinstance(root.get("name"), str):
        fields["agent"] = root["name"]
    model = next(filter(None, map(_model, runs)), None)
    if model is not None:
        fields["model"] = model
    for source, target in (("start_time", "started_at"), ("end_time", "ended_at"),
                           ("reference_example_id", "case_id")):
        if isinstance(root.get(source), str) and root[source]:
            fields[target] = root[source]
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
