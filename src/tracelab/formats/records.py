"""Reading a file's records, the same way for every format (docs/formats.md, "Common rules"):
JSON Lines or one JSON document (`records`, `first_record`, `sample_records`), and turning a
`RecordError` into a quarantine row (`map_records`, `map_items`).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from tracelab.formats import source as limits
from tracelab.formats.array_stream import array_elements
from tracelab.formats.base import Quarantined
from tracelab.formats.source import (
    SAMPLE_BYTES,
    SAMPLE_RECORDS,
    UNSET,
    BadJSON,
    Oversized,
    Source,
    dump_json,
    parse_json,
)
from tracelab.formats.values import TEXT_PART_TYPES, Record, RecordError


def is_json_document(source: Source) -> bool:
    """True for a `.json` file (one JSON document), False for JSON Lines."""
    return source.stem_name.endswith(".json")


def load_document(source: Source) -> tuple[Any, str | None]:
    """A `.json` file parsed once per `Source`: ``(document, None)``, or ``(None, reason)``.

    Every adapter's `claims` sniffs it, then one adapter reads it: one parse.
    """
    if "document" not in source.cache and source.stem_name == source.name and source.size > limits.RECORD_LIMIT \
            and _opens_array(source.head(64)):
        # an uncompressed array known too large from its size: not read whole only to learn that
        source.cache["document"] = None, limits.too_large(source.size)
        source.cache["streamed"] = True
    if "document" not in source.cache:
        data = source.read_all()
        try:
            source.cache["document"] = parse_json(data), None
        except BadJSON as exc:
            source.cache["document"] = None, str(exc)
            # too large to parse whole, and an array: read element by element (`streamed_array`)
            source.cache["streamed"] = isinstance(data, Oversized) and _opens_array(data)
    return source.cache["document"]


def _opens_array(head: bytes) -> bool:
    """Whether a document's first bytes open an array (after a BOM and white space)."""
    return head.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] == b"["


def streamed_array(source: Source) -> bool:
    """True for a `.json` file too large to parse whole (over `RECORD_LIMIT`) that holds an array:
    its elements are read one at a time (`array_stream`), as the lines of JSON Lines are."""
    if not is_json_document(source):
        return False
    load_document(source)
    return bool(source.cache.get("streamed"))


def _streamed_sample(source: Source) -> list[Any]:
    """The first elements of a streamed array that auto-detection samples (objects only)."""
    if "stream_sample" not in source.cache:
        sample: list[Any] = []
        elements = array_elements(source)
        for item in elements:  # its first SAMPLE_RECORDS elements, bad ones skipped as bad lines are
            if isinstance(item, Quarantined):
                position = item.line
            else:
                position = item[0]
                if isinstance(item[1], dict):
                    sample.append(item[1])
            if position >= SAMPLE_RECORDS:
                break
        elements.close()
        source.cache["stream_sample"] = sample
    return source.cache["stream_sample"]


def records(
    source: Source, whole: Callable[[Any], bool] = lambda doc: False
) -> Iterator[tuple[int, Any, bytes | str | None] | Quarantined]:
    """Yield ``(line, record, raw)`` for each record of a file, or `Quarantined` for bad JSON.

    JSON Lines: one record per non-blank line, numbered by physical line. A
    `.json` file holding an array: one record per element, numbered from 1 by
    position, unless ``whole(document)`` says the array is itself one record
    (e.g. a bare list of chat messages); any other document is one record at
    line 1. ``raw`` is what a quarantine row keeps (see `raw_json`).
    """
    if not is_json_document(source):
        # records auto-detection parsed already are not parsed again
        yield from line_records(source.lines(), source.cache.pop("sampled", {}))
        return
    document, error = load_document(source)
    if streamed_array(source):
        yield from array_elements(source)
    elif error is not None:
        yield Quarantined(1, error, source.head())
    elif isinstance(document, list) and not whole(document):
        for position, element in enumerate(document, start=1):
            yield position, element, raw_json(element)
    else:
        yield 1, document, raw_json(document)


def line_records(lines: Iterable[tuple[int, bytes]], sampled: dict[int, Any] | None = None,
                 ) -> Iterator[tuple[int, Any, bytes] | Quarantined]:
    """`records` of JSON Lines: ``(line, record, raw)`` per line, `Quarantined` for bad JSON;
    a line in `sampled` (parsed by auto-detection) is not parsed again."""
    for line, raw in lines:
        if sampled and line in sampled:
            yield line, sampled.pop(line), raw
            continue
        try:
            yield line, parse_json(raw), raw
        except BadJSON as exc:
            yield Quarantined(line, str(exc), raw)


def raw_json(value: Any) -> bytes | None:
    """A parsed value's compact JSON, for a quarantine row's `raw`; None when orjson cannot write
    it (nested deeper than orjson's 255 levels, which orjson still reads)."""
    try:
        return dump_json(value)
    except TypeError:
        return None


def first_record(source: Source) -> Any:
    """The record a format's `claims` looks at: the first line, or a `.json` file's first
    element; during auto-detection, the sampled record being tried (`Source.sniffed`)."""
    if source.sniffed is not UNSET or not is_json_document(source):
        return source.first_record()
    document, _ = load_document(source)
    if streamed_array(source):
        return next(iter(_streamed_sample(source)), None)
    if isinstance(document, list):
        return document[0] if document else None
    return document


def sample_records(source: Source) -> Sequence[Any]:
    """What auto-detection looks at (docs/formats.md, Auto-detection): the first `SAMPLE_RECORDS`
    records that are JSON objects, read from at most the first `SAMPLE_BYTES` of the file; for a
    `.json` file, its first elements (the objects among them) or the document itself.

    Read lazily: a format that claims the first record costs the parse of that one only.
    """
    if is_json_document(source):
        document, _ = load_document(source)
        if streamed_array(source):
            return _streamed_sample(source)
        if isinstance(document, list):
            return [e for e in document[:SAMPLE_RECORDS] if isinstance(e, dict)]
        return [] if document is None else [document]
    return _Lazy(_objects(source))


def _objects(source: Source) -> Iterator[Any]:
    taken = read = 0
    sampled = source.cache.setdefault("sampled", {})
    for number, line in source.lines(chunk_size=1 << 16, limit=SAMPLE_BYTES):
        read += len(line)
        try:
            record = parse_json(line)
        except BadJSON:
            record = None
        if isinstance(record, dict):
            sampled[number] = record
            yield record
            taken += 1
        if taken >= SAMPLE_RECORDS or read >= SAMPLE_BYTES:
            return


class _Lazy(Sequence[Any]):
    """A sequence filled from an iterator as far as it is read."""

    def __init__(self, items: Iterator[Any]) -> None:
        self._items = items
        self._seen: list[Any] = []
        self._done = False

    def _fill(self, n: int) -> None:
        while not self._done and len(self._seen) < n:
            try:
                self._seen.append(next(self._items))
            except StopIteration:
                self._done = True

    def __iter__(self) -> Iterator[Any]:
        index = 0
        while True:
            self._fill(index + 1)
            if index >= len(self._seen):
                return
            yield self._seen[index]
            index += 1

    def __len__(self) -> int:
        self._fill(SAMPLE_RECORDS)
        return len(self._seen)

    def __bool__(self) -> bool:
        self._fill(1)
        return bool(self._seen)

    def __getitem__(self, index: Any) -> Any:
        self._fill(SAMPLE_RECORDS)
        return self._seen[index]


_PLAIN_ROLES = frozenset({"system", "developer", "user", "assistant"})


def plain_text_only(record: Any) -> bool:
    """True for a record that holds only plain-text messages: every message-log format reads it
    alike, so it decides nothing in auto-detection (docs/formats.md)."""
    if not isinstance(record, dict) or not isinstance(record.get("messages"), list):
        return False
    if record.get("tools") is not None or "system" in record:
        return False
    for message in record["messages"]:
        if not isinstance(message, dict) or message.get("role") not in _PLAIN_ROLES:
            return False
        if not message.keys() <= {"role", "content", "name"}:
            return False
        content = message.get("content")
        if isinstance(content, list):
            if not all(isinstance(p, dict) and p.get("type") in TEXT_PART_TYPES and p.keys() <= {"type", "text"}
                       for p in content):
                return False
        elif content is not None and not isinstance(content, str):
            return False
    return True


def map_records(
    source: Source,
    to_episode: Callable[[Any, Source, int], Record],
    whole: Callable[[Any], bool] = lambda doc: False,
) -> Iterator[tuple[int, Record] | Quarantined]:
    """Apply ``to_episode(record, source, line)`` to every record; `RecordError` quarantines it."""
    return map_items(records(source, whole), source, to_episode)


def map_items(
    items: Iterable[tuple[int, Any, bytes | str | None] | Quarantined],
    source: Source,
    to_episode: Callable[[Any, Source, int], Record],
) -> Iterator[tuple[int, Record] | Quarantined]:
    """`map_records` over items already read (e.g. `records` without a file's header line)."""
    for item in items:
        if isinstance(item, Quarantined):
            yield item
            continue
        line, record, raw = item
        try:
            yield line, to_episode(record, source, line)
        except RecordError as exc:
            yield Quarantined(line, str(exc), raw)
