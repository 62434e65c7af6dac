"""The vocabulary of the foreign-format adapters: `Record`, `Step`, `RecordError`, and the checks
of a record's values (`require_object`, `optional_string`, `require_list`, `json_text`, ...).

Adapters raise `RecordError` for a record that does not fit their format; the message is the
one-line quarantine reason (docs/formats.md, "Common rules").
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tracelab.formats.source import dump_json, plain_json

TEXT_PART_TYPES = frozenset({"text", "input_text", "output_text"})
"""Content-part types whose `text` is message text (Chat, Responses, Anthropic)."""


Record = dict[str, Any]


Step = dict[str, Any]


class RecordError(ValueError):
    """A record that does not fit its format; the message is the quarantine reason."""


def json_text(value: Any, sort_keys: bool = False) -> str:
    """Compact JSON text of a value (docs/trace-format.md §5); integers beyond 64 bits too.

    `sort_keys` orders object keys, for an identity that ignores key order.

    Raises:
        RecordError: the value nests deeper than Python's recursion limit (about 1000 levels).
    """
    try:
        return dump_json(value, sort_keys=sort_keys).decode()
    except TypeError:  # orjson writes no more than 255 levels
        pass
    try:
        return plain_json(value, sort_keys=sort_keys)
    except RecursionError:
        raise RecordError("a value nests too deeply to write as JSON text") from None


def type_of(value: Any) -> str | None:
    """The `type` of an object (a part, block or item) when it is a string, else None."""
    if isinstance(value, dict) and isinstance(value.get("type"), str):
        return value["type"]
    return None


def require_object(value: Any, where: str) -> Record:
    """`value` when it is a JSON object, else `RecordError` naming `where`."""
    if not isinstance(value, dict):
        raise RecordError(f"{where} is {json_type(value)}, not an object")
    return value


def optional_string(value: Any, where: str) -> str | None:
    """`value` when it is a string or null, else `RecordError` naming `where`."""
    if value is not None and not isinstance(value, str):
        raise RecordError(f"{where} is {json_type(value)}, not a string")
    return value


def require_list(value: Any, where: str) -> list[Any]:
    """`value` when it is a JSON array, else `RecordError` naming `where`."""
    if not isinstance(value, list):
        raise RecordError(f"{where} is {json_type(value)}, not a list")
    return value


def rest(obj: Record, mapped: Iterable[str | None]) -> Record:
    """The keys of `obj` an adapter does not map (they go to the step's `meta`)."""
    skip = set(mapped)
    return {key: value for key, value in obj.items() if key not in skip and value is not None}


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"
