"""trace-format §2/§4/§5 read in plain Python, for the sample-trace and generator tests.

Deliberately independent of `tracelab.ingest.pipeline`: the fixtures are held to the
spec, and the store tests then compare ingest's tables with what this module
derives. Case-insensitive matching uses Python's `lower()`, which equals the
spec's simple lowercase mapping for the ASCII and Latin needles these tests use.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

KINDS = frozenset({
    "system", "user", "assistant", "tool_call", "tool_result", "confirmation",
    "budget", "retrieval", "error", "event",
})
EPISODE_STRINGS = (
    "agent", "agent_version", "model", "case_id", "input", "output", "termination", "error",
)
STEP_STRINGS = ("text", "name", "error", "call_id")
EFFECTS = (None, "read", "write")


def parse_line(line: str) -> tuple[Any, list[str]]:
    """A JSONL line parsed, and its §5 violations (``invalid JSON`` when it does not parse)."""
    try:
        record = json.loads(line)
    except json.JSONDecodeError:
        return None, ["invalid JSON"]
    return record, violations(record)


def violations(record: Any) -> list[str]:
    """Every §5 'quarantined whole' rule the record breaks (empty: a valid episode)."""
    if not isinstance(record, dict):
        return ["not a JSON object"]
    found = []
    steps = record.get("steps")
    if not isinstance(steps, list):
        found.append("steps is not an array")
    if not isinstance(record.get("episode_id"), str) or not record["episode_id"]:
        found.append("episode_id is not a non-empty string")
    found += [f"{key} is not a string" for key in EPISODE_STRINGS if not _opt(record, key, str)]
    tags = record.get("tags")
    if tags is not None and not (isinstance(tags, list) and all(isinstance(t, str) for t in tags)):
        found.append("tags is not an array of strings")
    reward = record.get("reward")
    if reward is not None and (isinstance(reward, bool) or not isinstance(reward, (int, float))):
        found.append("reward is not a number")
    found += [f"{key} is not ISO-8601" for key in ("started_at", "ended_at")
              if not _iso(record.get(key))]
    found += [f"{key} is not an object" for key in ("principal", "meta") if not _opt(record, key, dict)]
    found += _tool_violations(record.get("tools"))
    if isinstance(steps, list):
        for i, step in enumerate(steps):
            found += [f"steps[{i}]: {v}" for v in _step_violations(step)]
    return found


def _opt(obj: dict[str, Any], key: str, kind: type) -> bool:
    return obj.get(key) is None or isinstance(obj[key], kind)


def _iso(value: Any) -> bool:
    if value is None:
        return True
    try:  # Python 3.10 reads no trailing "Z"
        datetime.fromisoformat(value[:-1] + "+00:00" if value.endswith("Z") else value)
    except (AttributeError, TypeError, ValueError):
        return False
    return True


def _tool_violations(tools: Any) -> list[str]:
    if tools is None:
        return []
    if not isinstance(tools, list):
        return ["tools is not an array"]
    found = []
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            found.append(f"tools[{i}] has no name")
        elif tool.get("effect") not in EFFECTS:
            found.append(f"tools[{i}]: bad effect")
    return found


def _step_violations(step: Any) -> list[str]:
    if not isinstance(step, dict):
        return ["not an object"]
    if "kind" not in step:
        return ["no kind"]
    if step["kind"] not in KINDS:
        return [f"unknown kind {step['kind']!r}"]
    found = [f"{key} is not a string" for key in STEP_STRINGS if not _opt(step, key, str)]
    if step.get("status") not in (None, "", "ok", "error", "denied"):
        found.append("bad status")
    if step.get("effect") not in EFFECTS:
        found.append("bad effect")
    if not _iso(step.get("ts")):
        found.append("ts is not ISO-8601")
    if not _opt(step, "meta", dict):
        found.append("meta is not an object")
    return found


# ---------------------------------------------------------------- derived facts


@dataclass(frozen=True)
class Call:
    """One tool call as §3 `tool_calls` describes it."""

    call_index: int
    call_step_idx: int
    result_step_idx: int | None
    call_id: str | None
    tool_name: str | None
    args: Any
    status: str
    effect: str | None


def pair_results(steps: list[dict[str, Any]]) -> dict[int, int | None]:
    """Call step index -> result step index (None: no result), by the §2/§5 pairing rule."""
    pairs: dict[int, int | None] = {}
    unpaired: list[int] = []
    for idx, step in enumerate(steps):
        if step["kind"] == "tool_call":
            pairs[idx] = None
            unpaired.append(idx)
        elif step["kind"] == "tool_result" and unpaired:
            cid, name = step.get("call_id") or "", step.get("name") or ""
            target = next((c for c in unpaired if cid and steps[c].get("call_id") == cid), None)
            if target is None and name:
                target = next((c for c in unpaired if steps[c].get("name") == name), None)
            target = unpaired[0] if target is None else target
            unpaired.remove(target)
            pairs[target] = idx
    return pairs


def result_status(step: dict[str, Any]) -> str:
    """`status` when non-empty, else ``error`` when ``is_error`` is JSON true, else ``ok``."""
    if step.get("status"):
        return step["status"]
    return "error" if step.get("is_error") is True else "ok"


def parse_args(args: Any) -> Any:
    """Args as the `data` column holds them: a JSON string parsed, unparseable kept raw."""
    if isinstance(args, str):
        try:
            return json.loads(args)
        except json.JSONDecodeError:
            return args
    return args


def calls(ep: dict[str, Any]) -> list[Call]:
    """The episode's tool calls with their paired status and resolved effect."""
    steps = ep["steps"]
    definitions: dict[str, str | None] = {}
    for tool in ep.get("tools") or []:
        definitions.setdefault(tool["name"], tool.get("effect"))
    out = []
    for n, (call_idx, result_idx) in enumerate(sorted(pair_results(steps).items())):
        step = steps[call_idx]
        status = "missing" if result_idx is None else result_status(steps[result_idx])
        effect = step.get("effect") or definitions.get(step.get("name"))
        out.append(Call(n, call_idx, result_idx, step.get("call_id"), step.get("name"),
                        parse_args(step.get("args")), status, effect))
    return out


def step_data(step: dict[str, Any]) -> Any:
    """A step's `data` column (§3), by kind."""
    kind = step["kind"]
    if kind == "tool_call" or kind == "confirmation":
        return parse_args(step.get("args"))
    if kind == "tool_result":
        return step.get("result")
    if kind == "budget":
        return {k: step[k] for k in ("steps_used", "tokens_used") if k in step}
    if kind in ("retrieval", "event"):
        return step.get("data")
    return None


def transcript(ep: dict[str, Any]) -> list[tuple[str, str]]:
    """§4 transcript fragments as ``(place, text)``; place is e.g. ``output`` or ``tool_call.data``."""
    found = [(key, ep[key]) for key in ("input", "output", "error") if isinstance(ep.get(key), str)]
    for step in ep["steps"]:
        kind = step["kind"]
        found += [(f"{kind}.{key}", step[key]) for key in ("text", "name", "error")
                  if isinstance(step.get(key), str)]
        found += [(f"{kind}.data", leaf) for leaf in _leaves(step_data(step))]
    return found


def _leaves(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in [k, *_leaves(v)]]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _leaves(v)]
    return [json.dumps(value)]


def leak_places(ep: dict[str, Any], needle: str) -> set[str]:
    """The transcript places in which `needle` occurs, case-insensitively."""
    low = needle.lower()
    return {place for place, text in transcript(ep) if low in text.lower()}
