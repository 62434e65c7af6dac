"""tracelab's own format, `tracelab.episode/v1` (docs/trace-format.md §2): already the shape ingest wants."""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from tracelab.formats.base import Quarantined
from tracelab.formats.records import first_record, is_json_document, line_records, load_document, records
from tracelab.formats.source import Source

name = "native"
summary = "tracelab.episode/v1: JSON Lines, one episode per line, or a .json array of episodes"
maps = "every field of docs/trace-format.md §2, as recorded"
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
    return _looks_native(first_record(source))


def episodes(source: Source) -> Iterator[tuple[int, dict[str, Any]] | Quarantined]:
    """Every line (or array element) that is a JSON object; anything else is quarantined."""
    if is_json_document(source):
        document, _ = load_document(source)
        if document is not None and not isinstance(document, list):
            yield Quarantined(1, "a .json file must hold one array of episodes", source.head())
            return
    yield from _objects(records(source))


def line_episodes(lines: Iterable[tuple[int, bytes]]) -> Iterator[tuple[int, dict[str, Any]] | Quarantined]:
    """`episodes` of a JSON Lines file's lines: every line is a whole episode."""
    return _objects(line_records(lines))


def _objects(items: Iterable[tuple[int, Any, Any] | Quarantined]) -> Iterator[tuple[int, dict[str, Any]] | Quarantined]:
    for item in items:
        if isinstance(item, Quarantined):
            yield item
        elif isinstance(item[1], dict):
            yield item[0], item[1]
        else:
            yield Quarantined(item[0], f"not a JSON object (a JSON {_json_kind(item[1])})", item[2])


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "boolean", int: "number", float: "number", str: "string", list: "array"}.get(
        type(value), type(value).__name__
    )
