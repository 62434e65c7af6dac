"""Records to the documents SQL reads: the per-record Python work of ingest, free of DuckDB.

`detect_format` picks a file's adapter from a sample of its records; `prepare` splits a record
into the documents `sql/ingest/stage.sql` reads, with its canonical JSON. `parse_files` and
`parse_lines` run both over a job of small files or of one file's lines: ingest runs them in
worker processes when a corpus is large enough to pay for them (`tracelab.ingest.pipeline`, the
parse pool), else in its reading thread; the result is the same either way. This module
imports no DuckDB, so that a worker starts quickly (it imports only what parsing needs).
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from tracelab.errors import DataError
from tracelab.formats import all_formats, get_format
from tracelab.formats.base import Adapter, Quarantined
from tracelab.formats.records import plain_text_only, sample_records
from tracelab.formats.source import RAW_LIMIT, RECORD_LIMIT, UNSET, BadJSON, Source, dump_json, parse_json, too_large
from tracelab.native_keys import EPISODE_KEYS, STEP_KEYS

Entry = tuple[int, "Prepared"] | tuple[int, str, str | None]
"""A record prepared, ``(line, prepared)``, or one rejected, ``(line, reason, raw)``."""


def detect_format(source: Source, candidates: Iterable[Adapter] | None = None) -> Adapter | None:
    """The format of a file, from a sample of its records (docs/formats.md, Auto-detection).

    The first format, in registry order, that claims a sampled record by a marker of its own
    wins; records holding only plain-text messages decide nothing unless no sampled record has
    a marker. None when no format claims any sampled record.
    """
    modules = list(candidates) if candidates is not None else all_formats()
    sample = sample_records(source)
    if not sample:
        # nothing parses as JSON objects (an archive, a pretty-printed document): the formats
        # that recognise a file by its name or container still can
        return next((m for m in modules if m.claims(source)), None)
    plain = None
    try:
        for module in modules:
            for record in sample:
                source.sniffed = record
                if module.claims(source):
                    if not plain_text_only(record):
                        return module
                    plain = plain or module
    finally:
        source.sniffed = UNSET
    return plain


# --- per-record preparation ---------------------------------------------------------------


class Prepared(NamedTuple):
    """One record as SQL reads it (sql/ingest/stage.sql), and its canonical JSON."""

    head: bytes
    """The record without `steps` and `tools`, as JSON: unlisted keys under ``meta.extra``."""
    steps: bytes | None
    """`steps` as JSON, its steps' unlisted keys under ``meta.extra`` and JSON-string args
    parsed; None when absent or null."""
    n_steps: int | None
    """How many steps; None when `steps` is not an array."""
    tools: bytes | None
    """`tools` as JSON; None when absent or null."""
    canonical: bytes
    """Keys sorted by code point, compact: what `content_hash` hashes and a quarantined record keeps."""
    content_hash: str
    """SHA-256 of `canonical`, in hex (docs/trace-format.md §5)."""
    size: int
    """Bytes of the three documents: what the record weighs in a batch (read several times per record)."""


def prepare(record: dict[str, Any]) -> Prepared:
    """The record split into the three documents SQL reads, plus its canonical JSON (docs/trace-format.md §5).

    Steps and tools travel apart from the rest, so that SQL parses each part once. The
    documents keep recorded key order; unlisted keys move under ``meta.extra`` and
    JSON-string args are parsed strictly. The input is never mutated.
    """
    canonical = dump_json(record, sort_keys=True)
    doc = record
    if not record.keys() <= EPISODE_KEYS:
        doc = _with_extra(record, EPISODE_KEYS)
    steps = doc.get("steps")
    # In compact JSON a key "args" with a string value reads `"args":"` (inside a string every
    # quote is escaped): without those bytes, and without unlisted step keys, no step changes.
    if isinstance(steps, list) and (_STRING_ARGS in canonical or not _steps_listed_only(steps)):
        steps = [_prepare_step(s) if isinstance(s, dict) else s for s in steps]
    tools = doc.get("tools")
    head = dict(doc)  # a copy in C, then two deletions: faster than a comprehension over every key
    head.pop("steps", None)
    head.pop("tools", None)
    head_json = dump_json(head)
    steps_json = None if steps is None else dump_json(steps)
    tools_json = None if tools is None else dump_json(tools)
    return Prepared(
        head=head_json,
        steps=steps_json,
        n_steps=len(steps) if isinstance(steps, list) else None,
        tools=tools_json,
        canonical=canonical,
        content_hash=hashlib.sha256(canonical).hexdigest(),
        size=len(head_json) + len(steps_json or b"") + len(tools_json or b""),
    )


_STRING_ARGS = b'"args":"'


def _steps_listed_only(steps: list[Any]) -> bool:
    """True when every step is an object of a known kind with only the keys that kind lists."""
    try:
        for step in steps:
            if not step.keys() <= STEP_KEYS[step["kind"]]:
                return False
    except (AttributeError, KeyError, TypeError):  # not an object, or no (known) kind
        return False
    return True


def _listed_keys(step: dict[str, Any]) -> frozenset[str] | None:
    """The keys the step's kind lists; None for a kind outside §2 (quarantined anyway)."""
    kind = step.get("kind")
    return STEP_KEYS.get(kind) if isinstance(kind, str) else None


def _prepare_step(step: dict[str, Any]) -> dict[str, Any]:
    allowed = _listed_keys(step)
    out = step
    if allowed is not None and not step.keys() <= allowed:
        out = _with_extra(step, allowed)
    args = out.get("args")
    if isinstance(args, str) and out.get("kind") in ("tool_call", "confirmation"):
        out = dict(out) if out is step else out
        try:
            out["args"] = parse_json(args)
            out["_tl_args_text"] = args
        except BadJSON:
            out["_tl_args_bad"] = True
    return out


def _with_extra(obj: dict[str, Any], allowed: frozenset[str]) -> dict[str, Any]:
    """A copy of `obj` with its keys outside `allowed` moved under ``meta.extra``."""
    meta = obj.get("meta")
    if meta is not None and not isinstance(meta, dict):
        return obj  # quarantined for its meta anyway; keep the record as it came
    out = {k: v for k, v in obj.items() if k in allowed}
    extra = {k: v for k, v in obj.items() if k not in allowed}
    new_meta = dict(meta or {})
    old = new_meta.get("extra")
    new_meta["extra"] = {**old, **extra} if isinstance(old, dict) else extra
    out["meta"] = new_meta
    return out


def raw_text(raw: str | bytes | None) -> str | None:
    if raw is None:
        return None
    if isinstance(raw, bytes):
        raw = raw[:RAW_LIMIT].decode("utf-8", errors="backslashreplace")
    return raw[:RAW_LIMIT]


def prepared_entries(items: Iterable[tuple[int, dict[str, Any]] | Quarantined]) -> Iterator[Entry]:
    """Each record prepared, or ``(line, reason, raw)`` for one the adapter or `prepare` rejected."""
    for item in items:
        if isinstance(item, Quarantined):
            yield item.line, item.reason, raw_text(item.raw)
            continue
        line, record = item
        try:
            prepared = prepare(record)
        except TypeError as exc:  # orjson.JSONEncodeError included
            yield line, f"cannot be serialised: {exc}", None
            continue
        if len(prepared.canonical) > RECORD_LIMIT:
            yield line, too_large(len(prepared.canonical)), raw_text(prepared.canonical)
            continue
        yield line, prepared


# --- jobs (run in the reading thread, or in a worker process) -------------------------------


class FileParse(NamedTuple):
    """What one small file gave: its format and entries, or why it gave nothing."""

    status: str
    """``ok``; ``failed`` (unreadable: `message` says why); ``not-a-trace`` (no format claims it)."""
    format: str | None
    entries: list[Entry]
    message: str | None = None
    unread: dict[str, int] | None = None
    """Records of types the adapter does not know, by type (`Source.unread`)."""


def parse_files(files: Sequence[tuple[str, str, bytes]], forced: str | None) -> list[FileParse]:
    """Each small file, read whole already (``(path, uri, bytes)``), detected and prepared."""
    return [parse_file(path, uri, data, forced) for path, uri, data in files]


def parse_file(path: str | Path, uri: str, data: bytes, forced: str | None) -> FileParse:
    """One file's format (`forced`, else detected) and all its entries, from its bytes."""
    source = Source(path, data=data, uri=uri)
    module = adapter_of(source, forced)
    if isinstance(module, FileParse):
        return module
    try:
        entries = list(prepared_entries(module.episodes(source)))
    except DataError as exc:
        return FileParse("failed", module.name, [], str(exc))
    except OSError as exc:
        return FileParse("failed", module.name, [], f"{uri}: {exc.strerror or exc}")
    return FileParse("ok", module.name, entries, unread=dict(source.unread) or None)


def adapter_of(source: Source, forced: str | None) -> Adapter | FileParse:
    """The file's adapter: `forced`, else detected; else the `FileParse` that says why none."""
    candidates = all_formats()
    try:
        module = get_format(forced) if forced else detect_format(source, candidates)
    except DataError as exc:
        return FileParse("failed", None, [], str(exc))
    except OSError as exc:
        return FileParse("failed", None, [], f"{source.uri}: {exc.strerror or exc}")
    if module is None:
        tried = ", ".join(m.name for m in candidates)
        return FileParse("not-a-trace", None, [], f"{source.uri}: no format claims this file (tried {tried})")
    return module


def parse_lines(format: str, lines: Sequence[tuple[int, bytes]]) -> list[Entry]:
    """The entries of a run of a large file's lines, for a format with ``line_episodes``."""
    return list(prepared_entries(get_format(format).line_episodes(lines)))  # type: ignore[attr-defined]
