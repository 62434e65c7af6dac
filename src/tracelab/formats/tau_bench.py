"""tau-bench trajectories (`tau-bench`): the benchmark's results and historical trajectories.

A `.json` file holds an array of runs (JSON Lines, one run per line, is read
too). Each run is ``{task_id, trial, reward, info, traj}``; `traj` is the
OpenAI chat message list the agent saw, so it maps exactly as `openai-chat`
does, plus tau-bench's own error convention: the environment answers a failed
tool call with a tool message whose content starts with ``Error:``.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from tracelab.formats import openai_chat
from tracelab.formats.base import Quarantined
from tracelab.formats.records import first_record, map_records
from tracelab.formats.source import Source
from tracelab.formats.values import Record, RecordError, Step

name = "tau-bench"
summary = "tau-bench trajectories: a .json array of {task_id, trial, reward, info, traj}"
maps = (
    "traj: OpenAI chat messages, mapped as openai-chat; a tool message whose content starts "
    "with `Error:` -> status error (error = that content); task_id -> case_id (as a string); "
    "reward -> reward; info (task, gold actions, reward_info, user_cost) and trial -> meta; "
    "episode_id = <file hash>:<position in the array>"
)
unknown = (
    "tool definitions (runs do not record the tools offered: tools_declared = false; use a "
    "suite's tools: overrides for effects); agent and model; the domain (airline, retail); "
    "timestamps and durations"
)

ERROR_PREFIX = "Error:"
"""How tau-bench environments report a failed tool call (`tau_bench/envs/base.py`)."""


def _is_run(record: Any) -> bool:
    return isinstance(record, dict) and "task_id" in record and isinstance(record.get("traj"), list)


def claims(source: Source) -> bool:
    """A first record (array element or line) with `task_id` and a `traj` list."""
    return _is_run(first_record(source))


def episodes(source: Source) -> Iterator[tuple[int, dict[str, Any]] | Quarantined]:
    """One episode per run; an element that is not a run is quarantined."""
    return map_records(source, to_episode)


def to_episode(record: Any, source: Source, line: int) -> Record:
    """The native episode of one tau-bench run."""
    if not _is_run(record):
        raise RecordError("not a tau-bench run: expected an object with `task_id` and a `traj` list")
    chat = {key: value for key, value in record.items() if key not in ("traj", "task_id")}
    chat["messages"] = record["traj"]
    if record["task_id"] is not None:
        chat["case_id"] = str(record["task_id"])
    try:
        episode = openai_chat.to_episode(chat, source, line)
    except RecordError as exc:
        # The chat adapter names the list `messages`; a tau-bench user knows it as `traj`.
        reason = str(exc)
        raise RecordError("traj" + reason[len("messages"):] if reason.startswith("messages[")
                          else reason) from None
    episode["steps"] = [_with_error(step) for step in episode["steps"]]
    return episode


def _with_error(step: Step) -> Step:
    text = step.get("text")
    if step["kind"] == "tool_result" and isinstance(text, str) and text.startswith(ERROR_PREFIX):
        return {**step, "status": "error", "error": text}
    return step
