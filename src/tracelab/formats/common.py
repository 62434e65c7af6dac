"""The common rules every message-log adapter follows (docs/formats.md, "Common rules").

Small pure functions shared by the foreign-format adapters, so that one run
recorded in two formats gives the same rows:

- reading a file's records (`records`, `first_record`) and turning a
  `RecordError` into a quarantine row (`map_records`);
- episode fields (`episode_fields`): `episode_id`, the labelled keys, `meta`;
- text of content (`content_text`), assistant turns (`assistant_turn`), tool
  calls and results (`tool_call_step`, `tool_result_step`);
- tool definitions (`tool_definition`) and the final episode (`build_episode`),
  which derives `input` and `output` from the steps.

Adapters raise `RecordError` for a record that does not fit their format; the
message is the one-line quarantine reason.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from tracelab.formats import base
from tracelab.formats.array_stream import array_elements
from tracelab.formats.base import (
    SAMPLE_BYTES,
    SAMPLE_RECORDS,
    UNSET,
    BadJSON,
    Oversized,
    Quarantined,
    Source,
    dump_json,
    parse_json,
    plain_json,
)

EPISODE_ID_KEYS = ("episode_id", "id")
"""Top-level keys giving `episode_id`, in order (then `metadata.episode_id`)."""

LABEL_KEYS = (
    "case_id", "agent", "agent_version", "model", "termination", "reward", "tags", "principal",
)
"""Episode fields read from the same-named top-level key, else from `metadata.<key>`."""

TEXT_PART_TYPES = frozenset({"text", "input_text", "output_text"})
"""Content-part types whose `text` is message text (Chat, Responses, Anthropic)."""

Record = dict[str, Any]
Step = dict[str, Any]


class RecordError(ValueError):
    """A record that does not fit its format; the message is the quarantine reason."""


# -- reading records -----------------------------------------------------------------------


def is_json_document(source: Source) -> bool:
    """True for a `.json` file (one JSON document), False for JSON Lines."""
    return source.stem_name.endswith(".json")


def load_document(source: Source) -> tuple[Any, str | None]:
    """A `.json` file parsed once per `Source`: ``(document, None)``, or ``(None, reason)``.

    Every adapter's `claims` sniffs it, then one adapter reads it: one parse.
    """
    if "document" not in source.cache and source.stem_name == source.name and source.size > base.RECORD_LIMIT \
            and _opens_array(source.head(64)):
        # an uncompressed array known too large from its size: not read whole only to learn that
        source.cache["document"] = None, base.too_large(source.size)
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


# -- episode fields ------------------------------------------------------------------------


def _present(value: Any) -> bool:
    return value is not None and value != ""


def episode_fields(record: Record, source: Source, line: int, consumed: Iterable[str]) -> Record:
    """The episode-level fields of a record, by the common rules.

    `episode_id` is the record's `episode_id`, else `id`, else
    `metadata.episode_id`, else ``<first 16 hex of source.content_hash>:<line>``
    (deterministic, so re-ingest is idempotent). Each of `LABEL_KEYS` comes
    from the top-level key, else `metadata.<key>`. Every other top-level key
    (`metadata` itself included) goes to `meta`, except the `consumed` keys the
    adapter maps itself (e.g. `messages`, `tools`).
    """
    metadata = record.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    fields: Record = {}
    used = {"episode_id", *LABEL_KEYS, *consumed}
    id_key = next((key for key in EPISODE_ID_KEYS if _present(record.get(key))), None)
    if id_key is not None:
        fields["episode_id"] = record[id_key]
        used.add(id_key)
    elif _present(metadata.get("episode_id")):
        fields["episode_id"] = metadata["episode_id"]
    else:
        fields["episode_id"] = f"{source.content_hash[:16]}:{line}"
    for key in LABEL_KEYS:
        value = record.get(key)
        if value is None:
            value = metadata.get(key)
        if value is not None:
            fields[key] = value
    meta = {key: value for key, value in record.items() if key not in used}
    if meta:
        fields["meta"] = meta
    return fields


def label_fields(*holders: Record) -> Record:
    """Each of `LABEL_KEYS` from the first of `holders` where it is non-null.

    For formats whose labels live in an object of their own (Assay's `meta`,
    ATIF's `extra`) rather than at the top level or under `metadata`.
    """
    fields: Record = {}
    for key in LABEL_KEYS:
        value = next((h[key] for h in holders if h.get(key) is not None), None)
        if value is not None:
            fields[key] = value
    return fields


def build_episode(fields: Record, steps: list[Step], tools: list[Record] | None) -> Record:
    """The native episode: `fields`, `steps`, `tools` (omitted when None), `input`, `output`.

    `input` is the text of the first `user` step; `output` the text of the last
    step when that step is an `assistant` step, else absent (NULL).
    """
    episode = dict(fields)
    first_user = next((step for step in steps if step["kind"] == "user"), None)
    if first_user is not None and first_user.get("text") is not None:
        episode["input"] = first_user["text"]
    if steps and steps[-1]["kind"] == "assistant" and steps[-1].get("text") is not None:
        episode["output"] = steps[-1]["text"]
    if tools is not None:
        episode["tools"] = tools
    episode["steps"] = steps
    return episode


# -- text and steps ------------------------------------------------------------------------


def content_text(content: Any, where: str) -> tuple[str | None, list[Any]]:
    """The text of a message's content, and its non-text parts.

    A string is the text; None is no text. A list of parts contributes the
    `text` of its text parts (`TEXT_PART_TYPES`, or plain strings), joined
    with ``"\\n"``; other parts (images, audio) are returned to go to the
    step's `meta` under ``parts``. Anything else raises `RecordError`.
    """
    if content is None or isinstance(content, str):
        return content, []
    if not isinstance(content, list):
        raise RecordError(f"{where}: content is {_json_type(content)}, not a string or a list")
    texts: list[str] = []
    others: list[Any] = []
    for part in content:
        if isinstance(part, str):
            texts.append(part)
        elif type_of(part) in TEXT_PART_TYPES and isinstance(part.get("text"), str):
            texts.append(part["text"])
        else:
            others.append(part)
    return ("\n".join(texts) if texts else None), others


def result_content(content: Any, where: str) -> tuple[str | None, Any, list[Any]]:
    """A tool result's ``(text, result, parts)``: text content as `content_text` reads it.

    A structured value that is neither a string nor a list of parts (an
    object, a number) is kept as the result's `result`, as recorded.
    """
    if content is None or isinstance(content, (str, list)):
        text, parts = content_text(content, where)
        return text, None, parts
    return None, content, []


def message_step(kind: str, text: str | None, parts: list[Any], extra: Record) -> Step:
    """A `system`/`user`/`assistant` step; non-text `parts` and `extra` keys go to its `meta`."""
    step: Step = {"kind": kind}
    if text is not None:
        step["text"] = text
    meta = dict(extra)
    if parts:
        meta["parts"] = parts
    if meta:
        step["meta"] = meta
    return step


def assistant_turn(
    text: str | None, parts: list[Any], extra: Record, calls: list[Step]
) -> list[Step]:
    """An assistant turn: an `assistant` step when its text is non-empty, then its `calls`.

    A turn with empty text but non-text parts still yields an `assistant` step
    (without text), so the parts are kept. Unmapped message keys (`extra`) go
    to the `meta` of the turn's first step.
    """
    if text or parts:
        return [message_step("assistant", text or None, parts, extra), *calls]
    if extra and calls:
        first = dict(calls[0], meta={**calls[0].get("meta", {}), **extra})
        return [first, *calls[1:]]
    return list(calls)


def tool_call_step(name: Any, call_id: Any, args: Any, meta: Record | None = None) -> Step:
    """A `tool_call` step; `args` as recorded (a JSON string stays a string: ingest parses it)."""
    step: Step = {"kind": "tool_call"}
    if name is not None:
        step["name"] = name
    if call_id is not None:
        step["call_id"] = call_id
    if args is not None:
        step["args"] = args
    if meta:
        step["meta"] = meta
    return step


def tool_result_step(
    call_id: Any,
    name: Any,
    text: str | None,
    failed: bool,
    error: Any = None,
    parts: list[Any] | None = None,
    result: Any = None,
) -> Step:
    """A `tool_result` step with an explicit status: `error` when `failed`, else `ok`.

    A non-string `error` value is kept as its compact JSON text (``true`` is
    just a flag and gives no error text).
    """
    step: Step = {"kind": "tool_result"}
    if call_id is not None:
        step["call_id"] = call_id
    if name is not None:
        step["name"] = name
    if text is not None:
        step["text"] = text
    if result is not None:
        step["result"] = result
    step["status"] = "error" if failed else "ok"
    if error is not None and error is not True:
        step["error"] = error if isinstance(error, str) else json_text(error)
    if parts:
        step["meta"] = {"parts": parts}
    return step


def result_failed(message: Record) -> bool:
    """True when a result message has a non-null `error` or `is_error: true` (JSON true only)."""
    return message.get("error") is not None or message.get("is_error") is True


# -- tools ---------------------------------------------------------------------------------


def tool_definition(
    name: Any, description: Any, parameters: Any, *holders: Record
) -> Record:
    """A native tool definition. `effect` is the first `x-effect` (else `effect`) of `holders`;
    `annotations` (MCP tool annotations) the first of `holders` that has them: SQL derives an
    effect from them when none is recorded (docs/trace-format.md §6)."""
    definition: Record = {"name": name}
    if description is not None:
        definition["description"] = description
    if parameters is not None:
        definition["parameters"] = parameters
    for holder in holders:
        effect = holder.get("x-effect", holder.get("effect"))
        if effect is not None:
            definition["effect"] = effect
            break
    for holder in holders:
        if holder.get("annotations") is not None:
            definition["annotations"] = holder["annotations"]
            break
    return definition


def tool_list(record: Record, to_definition: Callable[[Any, int], Record]) -> list[Record] | None:
    """The record's `tools` mapped one by one; None (unknown) when the key is absent or null."""
    tools = record.get("tools")
    if tools is None:
        return None
    if not isinstance(tools, list):
        raise RecordError(f"tools is {_json_type(tools)}, not a list")
    return [to_definition(tool, index) for index, tool in enumerate(tools)]


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
        raise RecordError(f"{where} is {_json_type(value)}, not an object")
    return value


def optional_string(value: Any, where: str) -> str | None:
    """`value` when it is a string or null, else `RecordError` naming `where`."""
    if value is not None and not isinstance(value, str):
        raise RecordError(f"{where} is {_json_type(value)}, not a string")
    return value


def require_list(value: Any, where: str) -> list[Any]:
    """`value` when it is a JSON array, else `RecordError` naming `where`."""
    if not isinstance(value, list):
        raise RecordError(f"{where} is {_json_type(value)}, not a list")
    return value


def rest(obj: Record, mapped: Iterable[str | None]) -> Record:
    """The keys of `obj` an adapter does not map (they go to the step's `meta`)."""
    skip = set(mapped)
    return {key: value for key, value in obj.items() if key not in skip and value is not None}


def _json_type(value: Any) -> str:
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
