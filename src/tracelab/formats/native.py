"""tracelab's own format, `tracelab.episode/v1` (trace-format.md §2): already the shape ingest wants."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from tracelab.formats.base import BadJSON, Quarantined, Source, parse_json

name = "native"
summary = "tracelab.episode/v1: JSON Lines, one episode per line, or a .json array of episodes"
maps = "every field of trace-format.md §2, as recorded"
unknown = "nothing beyond what a record leaves out: an episode without `tools` has unknown availability"

FORMAT_TAG = "tracelab.episode/v1"


def _looks_native(record: Any) -> bool:
    if not isinstance(record, dict):
        return False
    if record.get("format") == FORMAT_TAG:
        return True
    return "episode_id" in record and isinstance(record.get("steps"), list)


def claims(source: Source) -> bool:
    """A .jsonl whose first record is a native episode, or a .json array of them."""
    if source.stem_name.endswith(".json"):
        head = source.read_all().lstrip()[:1]
        if head != b"[":
            return False
        data = _load_array(source)
        return isinstance(data, list) and bool(data) and _looks_native(data[0])
    return _looks_native(source.first_record())


def _load_array(source: Source) -> Any:
    try:
        return parse_json(source.read_all())
    except BadJSON:
        return None


def episodes(source: Source) -> Iterator[tuple[int, dict[str, Any]] | Quarantined]:
    """Every line (or array element) that is a JSON object; anything else is quarantined."""
    if source.stem_name.endswith(".json"):
        yield from _array_episodes(source)
        return
    for line, raw in source.lines():
        try:
            record = parse_json(raw)
        except BadJSON as exc:
            yield Quarantined(line, str(exc), raw)
            continue
        if isinstance(record, dict):
            yield line, record
        else:
            yield Quarantined(line, f"not a JSON object (a JSON {_json_kind(record)})", raw)


def _array_episodes(source: Source) -> Iterator[tuple[int, dict[str, Any]] | Quarantined]:
    raw = source.read_all()
    try:
        data = parse_json(raw)
    except BadJSON as exc:
        yield Quarantined(1, str(exc), raw)
        return
    if not isinstance(data, list):
        yield Quarantined(1, "a .json file must hold one array of episodes", raw)
        return
    for position, record in enumerate(data, start=1):
        if isinstance(record, dict):
            yield position, record
        else:
            yield Quarantined(position, f"not a JSON object (a JSON {_json_kind(record)})", None)


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "boolean", int: "number", float: "number", str: "string", list: "array"}.get(
        type(value), type(value).__name__
    )
