"""Inspect AI eval logs (`inspect`): the `.json` log and the `.eval` zip archive.

One episode per sample and epoch. A sample's steps come from its `events`
transcript when it recorded model or tool events (the scorers' own model
calls excluded), else from its `messages` (see `inspect_steps`). The
module is named `inspect_log` so that it does not shadow the standard
library's `inspect`.
"""
from __future__ import annotations

import struct
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, BinaryIO

from tracelab.errors import DataError
from tracelab.formats.base import Quarantined
from tracelab.formats.episodes import build_episode
from tracelab.formats.inspect_steps import sample_steps, seconds
from tracelab.formats.records import first_record, is_json_document, raw_json, records
from tracelab.formats.source import RECORD_LIMIT, BadJSON, Source, parse_json, too_large
from tracelab.formats.values import Record, RecordError, require_list, require_object, rest

name = "inspect"
summary = "Inspect AI eval logs: a .json log or a .eval archive, one episode per sample and epoch"
maps = (
    "episode_id <eval_id (else task_id)>:<sample id>:<epoch>; case_id = sample id; "
    "model = eval.model; agent = eval.solver, else eval.task; tags = eval.tags; "
    "steps from the sample's events (model events: new system/user input messages, the "
    "output as an assistant turn with its tool_calls; tool events: the result, status error "
    "on an error, denied when the error type is `approval`; error and approval events) or, "
    "without model/tool events, from its messages; tools offered to model events -> "
    "definitions (union by name); reward = first score whose value is a number or C (1) / "
    "I (0); termination from the sample limit (message -> max_steps, token/context -> "
    "max_tokens, time/working -> timeout, cost -> max_cost, operator -> cancelled), else "
    "error when the sample has an error, else completed; attachments resolved"
)
unknown = (
    "tool definitions when no model event recorded its tools (messages-only samples: "
    "tools_declared = false); tool effects; principal; P/N and non-numeric scores (kept in "
    "meta.sample.scores, not in reward); the sample store and the final ModelOutput are not "
    "kept; .eval2 archives are not read"
)

HEADER_ENTRIES = ("header.json", "_journal/start.json", "start.json")
"""Where an archive keeps its eval spec: finished logs, logs being written, old logs."""
ARCHIVE_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, OSError)
"""What reading a damaged or truncated zip raises."""
ZSTD_METHOD = 93
"""Zip compression method id of Zstandard, which `zipfile` reads only from Python 3.14."""
ENCRYPTED = 0x1
"""The zip entry flag bit of an encrypted entry (tracelab holds no passwords)."""
EVAL_META_KEYS = (
    "eval_id", "run_id", "created", "task", "task_id", "task_version", "task_file",
    "solver", "model", "dataset",
)
SAMPLE_MAPPED = ("input", "messages", "events", "events_data", "attachments", "output", "store")
"""Sample keys that become steps (or are bulky run state); the others go to `meta.sample`."""
LIMIT_TERMINATIONS = {
    "message": "max_steps", "token": "max_tokens", "context": "max_tokens", "time": "timeout",
    "working": "timeout", "cost": "max_cost", "operator": "cancelled",
}
LETTER_REWARDS = {"C": 1.0, "I": 0.0}
ATTACHMENT = "attachment://"
LEGACY_ATTACHMENT = "tc://"


# -- detection and reading ----------------------------------------------------------------


def _is_archive(source: Source) -> bool:
    return source.stem_name.endswith(".eval")


def _is_log(document: Any) -> bool:
    return isinstance(document, dict) and _is_spec(document.get("eval"))


def _is_spec(spec: Any) -> bool:
    return isinstance(spec, dict) and "task" in spec and "model" in spec


def claims(source: Source) -> bool:
    """A `.eval` archive with an eval header, or a `.json` log whose `eval` has task and model."""
    if _is_archive(source):
        try:
            with _archive(source) as archive:
                return _is_log(_header(archive, source))
        except ARCHIVE_ERRORS:
            return False
    return is_json_document(source) and _is_log(first_record(source))


def episodes(source: Source) -> Iterator[tuple[int, dict[str, Any]] | Quarantined]:
    """One episode per sample; line = the sample's 1-based position in the log."""
    if _is_archive(source):
        yield from _archive_episodes(source)
        return
    for item in records(source):
        if isinstance(item, Quarantined):
            yield item
            continue
        _, log, raw = item
        if not _is_log(log):
            yield Quarantined(1, "not an Inspect log: no `eval` with `task` and `model`", raw)
            return
        samples = log.get("samples") or []
        if not isinstance(samples, list):
            yield Quarantined(1, "samples is not a list", raw)
            return
        for position, sample in enumerate(samples, start=1):
            yield _mapped(log, sample, position, f"samples[{position - 1}]")


def _archive_episodes(source: Source) -> Iterator[tuple[int, dict[str, Any]] | Quarantined]:
    """The samples of a `.eval` archive, read one at a time (memory follows the largest entry,
    never the archive); an archive error on any entry fails the whole file (`DataError`)."""
    try:
        with _archive(source) as archive:
            log = _header(archive, source)
            if not _is_log(log):
                yield Quarantined(1, "not an Inspect log archive: no eval spec in header.json, "
                                  "_journal/start.json or start.json")
                return
            entries = [info for info in archive.infolist() if _is_sample_entry(info.filename)]
            for position, info in enumerate(entries, start=1):
                yield from _sample_entry(log, position, info.filename, _entry(archive, info, source))
    except ARCHIVE_ERRORS as exc:
        raise DataError(
            f"{source.uri}: not a readable .eval archive ({exc}); nothing of it was loaded"
        ) from None


def _sample_entry(log: Any, position: int, entry: str, data: bytes | str,
                  ) -> Iterator[tuple[int, dict[str, Any]] | Quarantined]:
    if isinstance(data, str):
        yield Quarantined(position, f"{entry}: {data}")
        return
    try:
        sample = parse_json(data)
    except BadJSON as exc:
        yield Quarantined(position, f"{entry}: {exc}", data)
        return
    yield _mapped(log, sample, position, entry)


@contextmanager
def _archive(source: Source) -> Iterator[zipfile.ZipFile]:
    """The archive, from the bytes already read when the file was small enough to hold."""
    with _seekable(source) as fh, zipfile.ZipFile(fh) as archive:
        yield archive


def _seekable(source: Source) -> BinaryIO:
    return source.raw() if source.in_memory else open(source.location, "rb")


def _is_sample_entry(entry: str) -> bool:
    return entry.startswith("samples/") and entry.endswith(".json") and entry.count("/") == 1


def _header(archive: zipfile.ZipFile, source: Source) -> Any:
    names = set(archive.namelist())
    entry = next((e for e in HEADER_ENTRIES if e in names), None)
    if entry is None:
        return None
    data = _entry(archive, archive.getinfo(entry), source)
    try:
        return parse_json(data) if isinstance(data, bytes) else None
    except BadJSON:
        return None


def _entry(archive: zipfile.ZipFile, info: zipfile.ZipInfo, source: Source) -> bytes | str:
    """An entry's bytes, or the reason it cannot be read (an unsupported compression method).

    Raises:
        zipfile.BadZipFile: the entry is encrypted (zipfile's own RuntimeError would escape).
    """
    if info.flag_bits & ENCRYPTED:
        raise zipfile.BadZipFile(f"{info.filename} is encrypted")
    if info.file_size > RECORD_LIMIT:  # never inflated: a zip bomb stops here
        return too_large(info.file_size)
    if info.compress_type == ZSTD_METHOD:
        return _zstd_entry(info, source)
    try:
        return archive.read(info)
    except NotImplementedError as exc:
        return f"cannot be decompressed ({exc})"


def _zstd_entry(info: zipfile.ZipInfo, source: Source) -> bytes:
    import zstandard

    with _seekable(source) as fh:
        fh.seek(info.header_offset)
        header = fh.read(30)
        if len(header) < 30 or header[:4] != b"PK\x03\x04":
            raise zipfile.BadZipFile(f"bad local header for {info.filename}")
        name_len, extra_len = struct.unpack("<HH", header[26:30])
        fh.seek(info.header_offset + 30 + name_len + extra_len)
        compressed = fh.read(info.compress_size)
    try:
        return zstandard.ZstdDecompressor().decompress(compressed, max_output_size=info.file_size)
    except zstandard.ZstdError as exc:
        raise zipfile.BadZipFile(f"{info.filename}: {exc}") from None


def _mapped(log: Record, sample: Any, line: int, where: str) -> tuple[int, Record] | Quarantined:
    try:
        return line, sample_episode(log, sample, where)
    except RecordError as exc:
        return Quarantined(line, str(exc), raw_json(sample))


# -- one sample -----------------------------------------------------------------------------


def sample_episode(log: Record, sample: Any, where: str) -> Record:
    """The native episode of one sample of the log (`log` holds `eval` and `status`)."""
    sample = require_object(sample, where)
    attachments = sample.get("attachments")
    if isinstance(attachments, dict) and attachments:
        sample = _resolve(sample, attachments, where)
    spec = log["eval"]
    steps, tools = sample_steps(sample, where)
    fields = {**_identity(spec, sample, where), **_outcome(sample), **_times(sample, where)}
    fields["meta"] = {
        "eval": {key: spec[key] for key in EVAL_META_KEYS if spec.get(key) is not None},
        "log_status": log.get("status"),
        "sample": rest(sample, SAMPLE_MAPPED),
    }
    return build_episode(fields, steps, tools)


def _identity(spec: Record, sample: Record, where: str) -> Record:
    sample_id = sample.get("id")
    if isinstance(sample_id, bool) or not isinstance(sample_id, (str, int)):
        raise RecordError(f"{where}: the sample has no id (a string or an integer)")
    eval_key = next((spec[k] for k in ("eval_id", "task_id") if spec.get(k)), None)
    if eval_key is None:
        raise RecordError("the log's eval has neither eval_id nor task_id")
    solver = spec.get("solver")
    fields: Record = {
        "episode_id": f"{eval_key}:{sample_id}:{sample.get('epoch', 1)}",
        "case_id": str(sample_id),
        "agent": solver if isinstance(solver, str) and solver else spec.get("task"),
        "model": spec.get("model"),
    }
    if isinstance(spec.get("tags"), list):
        fields["tags"] = spec["tags"]
    return fields


def _outcome(sample: Record) -> Record:
    """`termination`, `error` and `reward` of a sample."""
    fields: Record = {}
    error = sample.get("error")
    message = error.get("message") if isinstance(error, dict) else error
    if message is not None:
        fields["error"] = message
    limit = sample.get("limit")
    limit_type = limit.get("type") if isinstance(limit, dict) else limit
    if isinstance(limit_type, str):
        fields["termination"] = LIMIT_TERMINATIONS.get(limit_type, limit_type)
    else:
        fields["termination"] = "error" if error is not None else "completed"
    reward = _reward(sample.get("scores"))
    if reward is not None:
        fields["reward"] = reward
    return fields


def _reward(scores: Any) -> float | int | None:
    """The first score, in the log's order, whose value is a number or the grade C / I."""
    if not isinstance(scores, dict):
        return None
    for score in scores.values():
        value = score.get("value") if isinstance(score, dict) else None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return value
        if isinstance(value, str) and value in LETTER_REWARDS:
            return LETTER_REWARDS[value]
    return None


def _times(sample: Record, where: str) -> Record:
    """`started_at` / `ended_at`: the sample's own, else its first and last event times."""
    events = sample.get("events")
    events = require_list(events, f"{where}.events") if events is not None else []
    stamps = [
        stamp
        for event in events
        if isinstance(event, dict)
        for stamp in (event.get("timestamp"), event.get("completed"))
        if isinstance(stamp, str)
    ]
    fields: Record = {}
    started = sample.get("started_at") or (stamps[0] if stamps else None)
    ended = sample.get("completed_at") or (max(stamps, key=_order) if stamps else None)
    if started is not None:
        fields["started_at"] = started
    if ended is not None:
        fields["ended_at"] = ended
    return fields


def _order(stamp: str) -> float:
    moment = seconds(stamp)
    return float("-inf") if moment is None else moment


def _resolve(value: Any, attachments: dict[str, Any], where: str) -> Any:
    """`value` with every ``attachment://<hash>`` string replaced by the attachment's content.

    `value` is not changed: every list and object on the way is copied. A stack rather than
    recursion: a sample may nest as deep as the JSON reader allows (1024 levels), beyond
    Python's recursion limit. The expansion is counted before it is written out: one attachment
    of 1 MB referenced 4,000 times is a 4 GB record (docs/trace-format.md §6).

    Raises:
        RecordError: the attachments expand the sample past RECORD_LIMIT.
    """
    root = [value]
    pending: list[tuple[Any, Any]] = [(root, 0)]  # (copied container, index or key) to resolve
    sizes: dict[int, int] = {}
    expanded = 0
    while pending:
        holder, key = pending.pop()
        item = holder[key]
        if isinstance(item, str):
            holder[key] = content = _attachment(item, attachments)
            if content is not item:
                size = sizes.get(id(content))
                if size is None:
                    size = len(content) if isinstance(content, str) else len(raw_json(content) or b"")
                    sizes[id(content)] = size
                expanded += size
                if expanded > RECORD_LIMIT:
                    raise RecordError(f"{where}: its attachments expand it past {RECORD_LIMIT >> 20} MiB "
                                      "(records over that are not loaded)")
        elif isinstance(item, (list, dict)):
            holder[key] = item = item.copy()
            pending.extend((item, k) for k in (range(len(item)) if isinstance(item, list) else item))
    return root[0]


def _attachment(text: str, attachments: dict[str, Any]) -> Any:
    """The content of an ``attachment://<hash>`` reference; any other string as it is."""
    for prefix in (ATTACHMENT, LEGACY_ATTACHMENT):
        if text.startswith(prefix):
            return attachments.get(text[len(prefix):], text)
    return text
