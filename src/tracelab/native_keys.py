"""The keys a native record may carry (docs/trace-format.md §2): an episode's, and each step kind's.

Ingest refuses (quarantines) a record with other keys; suites name step kinds
(`trace_max_steps.kinds`). Kept apart from ingest so that loading a suite needs no store.
"""
from __future__ import annotations

CALL_STEP = "_tl_call_step"
"""A `tool_result` step key an adapter sets when its format records which call the result
answers (an OTLP tool span records both): the position of that call's step in the episode.
Ingest pairs the two, whatever other calls share the call id (docs/formats.md)."""

EPISODE_KEYS = frozenset({
    "format", "episode_id", "agent", "agent_version", "model", "case_id", "principal", "input",
    "output", "termination", "error", "reward", "started_at", "ended_at", "tags", "tools",
    "steps", "meta",
})
_COMMON_STEP_KEYS = {"kind", "ts", "duration_ms", "meta"}
STEP_KEYS: dict[str, frozenset[str]] = {
    kind: frozenset(_COMMON_STEP_KEYS | set(keys))
    for kind, keys in {
        "system": ["text"], "user": ["text"], "assistant": ["text"], "error": ["text"],
        "tool_call": ["name", "call_id", "args", "effect"],
        "tool_result": ["call_id", "name", "text", "result", "status", "is_error", "error", CALL_STEP],
        "confirmation": ["name", "args", "text"],
        "budget": ["steps_used", "tokens_used"],
        "retrieval": ["data"],
        "event": ["name", "data"],
    }.items()
}

STEP_KINDS: tuple[str, ...] = tuple(STEP_KEYS)
"""Every step kind, in the order above."""
