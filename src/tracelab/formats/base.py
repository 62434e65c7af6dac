"""The adapter contract: every input format maps onto native episode dicts.

An adapter is a small pure mapping. It reads one file (through `Source`) and
yields, in file order, either ``(line, episode)`` where ``episode`` is a dict in
the native ``tracelab.episode/v1`` shape (docs/trace-format.md §2), or a
`Quarantined` record. Ingest does everything after that (validation, pairing,
effects, de-duplication, quarantine rows, atomicity) once, for all formats.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from tracelab.formats.source import Source


@dataclass(frozen=True)
class Quarantined:
    """A record that cannot be ingested: where it was, why, and what it held."""

    line: int
    reason: str
    raw: str | bytes | None = None


class Adapter(Protocol):
    """What every format module provides (as module-level names or an object)."""

    name: str
    """The format name users pass to ``--format`` (e.g. ``openai-chat``)."""
    summary: str
    """One line for ``tracelab formats``: what the format is."""
    maps: str
    """For ``tracelab formats``: which fields it maps, in a few lines."""
    unknown: str
    """For ``tracelab formats``: what this format cannot know (e.g. tool definitions)."""

    def claims(self, source: Source) -> bool:
        """True when this adapter reads the file, from its name or the record `first_record`
        (records.first_record) returns; auto-detection asks once per sampled record, with
        `Source.sniffed` set to it (docs/formats.md, Auto-detection)."""

    def episodes(self, source: Source) -> Iterator[tuple[int, dict[str, Any]] | Quarantined]:
        """Yield ``(line, native_episode_dict)`` or `Quarantined`, in file order.

        A format whose JSON Lines records are each a whole episode may also provide
        ``line_episodes(lines)``: the same for ``(line, bytes)`` pairs of `Source.lines`, so
        that ingest can parse a large file's lines in worker processes. A format that reads a
        session whole from each of its files sets ``merges_files = True``
        (`tracelab.formats.merges_files`).
        """
