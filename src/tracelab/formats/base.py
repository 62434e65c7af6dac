"""The adapter contract: every input format maps onto native episode dicts.

An adapter is a small pure mapping. It reads one file (through `Source`) and
yields, in file order, either ``(line, episode)`` where ``episode`` is a dict in
the native ``tracelab.episode/v1`` shape (docs/trace-format.md §2), or a
`Quarantined` record. Ingest does everything after that (validation, pairing,
effects, de-duplication, quarantine rows, atomicity) once, for all formats.
"""
from __future__ import annotations

import gzip
import hashlib
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Protocol

import orjson

from tracelab.errors import DataError

RAW_LIMIT = 64 * 1024  # quarantine.raw keeps at most 64 KiB


@dataclass(frozen=True)
class Quarantined:
    """A record that cannot be ingested: where it was, why, and what it held."""

    line: int
    reason: str
    raw: str | bytes | None = None


class BadJSON(ValueError):
    """A line that is not strict JSON; the message is the quarantine reason."""


_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_TWENTY_DIGITS = b"0" * 20
"""The shortest digit run that can hold an integer beyond 64 bits (2**64 has 20 digits)."""


def parse_json(data: bytes | str) -> Any:
    """Parse strict JSON (RFC 8259): no NaN, no trailing commas; a repeated key keeps the last value.

    Integers keep every digit (docs/trace-format.md §5: plain decimal). orjson, which checks the text,
    reads an integer beyond 64 bits as a double; a text with a run of 20 digits is read again
    by `json`, whose integers are exact (a run inside a string costs only that second read).

    Raises:
        BadJSON: with a one-line reason fit for the quarantine table.
    """
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        if isinstance(data, bytes):
            try:
                data.decode("utf-8")
            except UnicodeDecodeError as uexc:
                raise BadJSON(f"not valid UTF-8 (byte {uexc.start})") from None
        raise BadJSON(f"invalid JSON: {exc}") from None
    text = data.encode() if isinstance(data, str) else data
    if _TWENTY_DIGITS in text.translate(_DIGITS_AS_ZERO):
        value = json.loads(text)
    return value


def dump_json(value: Any, *, sort_keys: bool = False) -> bytes:
    """Compact JSON as UTF-8 (docs/trace-format.md §5), integers beyond 64 bits in plain decimal.

    Raises:
        TypeError: a value JSON cannot hold, or nested deeper than orjson writes (255 levels).
    """
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS if sort_keys else None)
    except orjson.JSONEncodeError as exc:
        if "64-bit" not in str(exc):
            raise
    return plain_json(value, sort_keys=sort_keys).encode()


def plain_json(value: Any, *, sort_keys: bool = False) -> str:
    """Compact JSON text written by the standard library: slower than orjson, but without its
    limits (integers beyond 64 bits, 255 levels). Deeper than Python's recursion limit, it
    raises RecursionError."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=sort_keys)


class Source:
    """One input file: its decompressed bytes, its lines, its content hash.

    Lines follow docs/trace-format.md §5: a line ends at LF only, a CR right before it
    is dropped, a leading BOM is ignored, whitespace-only lines are skipped
    (but counted for line numbers).
    """

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.uri = str(self.path)
        self._hash: str | None = None

    @property
    def content_hash(self) -> str:
        """SHA-256 of the file's bytes as stored (compressed files: of the compressed bytes)."""
        if self._hash is None:
            digest = hashlib.sha256()
            with open(self.path, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(block)
            self._hash = digest.hexdigest()
        return self._hash

    @property
    def size(self) -> int:
        return self.path.stat().st_size

    @property
    def stem_name(self) -> str:
        """The file name without compression suffix (``a.jsonl.gz`` -> ``a.jsonl``)."""
        name = self.path.name
        for suffix in (".gz", ".zst"):
            if name.endswith(suffix):
                return name[: -len(suffix)]
        return name

    def open(self) -> BinaryIO:
        """The decompressed byte stream."""
        name = self.path.name
        if name.endswith(".gz"):
            return gzip.open(self.path, "rb")  # type: ignore[return-value]
        if name.endswith(".zst"):
            return io.BufferedReader(_ZstdReader(self.path), buffer_size=1 << 20)
        return open(self.path, "rb")

    def read_all(self) -> bytes:
        """The whole decompressed content (for formats that are one JSON document)."""
        with self.open() as fh:
            data = _read_checked(fh, self.uri)
        return data[3:] if data.startswith(b"\xef\xbb\xbf") else data

    def lines(self, chunk_size: int = 1 << 22) -> Iterator[tuple[int, bytes]]:
        """Yield ``(line_number, line_bytes)`` for every non-blank line, 1-based."""
        number = 0
        pieces: list[bytes] = []  # the line still open at the end of the last block
        first = True
        with self.open() as fh:
            while True:
                block = _read_block(fh, chunk_size, self.uri)
                if not block:
                    break
                if first:
                    if block.startswith(b"\xef\xbb\xbf"):
                        block = block[3:]
                    first = False
                parts = block.split(b"\n")
                if pieces and len(parts) > 1:
                    # a long line is joined once, when it ends (joining at every block is quadratic)
                    parts[0] = b"".join([*pieces, parts[0]])
                    pieces = []
                pieces.append(parts.pop())
                for part in parts:
                    number += 1
                    if part.endswith(b"\r"):
                        part = part[:-1]
                    if part.strip():
                        yield number, part
            pending = b"".join(pieces)
            if pending:
                number += 1
                if pending.endswith(b"\r"):
                    pending = pending[:-1]
                if pending.strip():
                    yield number, pending

    def first_record(self) -> Any:
        """The first non-blank line parsed as JSON, or None when it does not parse."""
        for _, line in self.lines(chunk_size=1 << 16):
            try:
                return parse_json(line)
            except BadJSON:
                return None
        return None


class _ZstdReader(io.RawIOBase):
    """Every zstd frame of a file, decompressed; input that ends inside a frame is an `EOFError`.

    python-zstandard's own stream reader ends quietly at a truncated frame, so a cut
    file would load in part; this reader fails like a truncated gzip instead.
    """

    def __init__(self, path: Path) -> None:
        import zstandard

        super().__init__()
        self._fh = open(path, "rb")
        self._dctx = zstandard.ZstdDecompressor()
        self._frame = self._dctx.decompressobj()
        self._in_frame = False
        self._out = b""
        self._pos = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while self._pos == len(self._out):
            chunk = self._fh.read(1 << 20)
            if not chunk:
                if self._in_frame:
                    raise EOFError("the zstd stream ends inside a frame (the file is truncated)")
                return 0
            self._out, self._pos = self._decompress(chunk), 0
        n = min(len(buffer), len(self._out) - self._pos)
        buffer[:n] = memoryview(self._out)[self._pos:self._pos + n]
        self._pos += n
        return n

    def _decompress(self, data: bytes) -> bytes:
        parts = []
        while data:
            if self._frame.eof:  # the next frame of a multi-frame file
                self._frame = self._dctx.decompressobj()
            parts.append(self._frame.decompress(data))
            self._in_frame = not self._frame.eof
            data = self._frame.unused_data if self._frame.eof else b""
        return b"".join(parts)

    def close(self) -> None:
        self._fh.close()
        super().close()


def _read_block(fh: BinaryIO, size: int, uri: str) -> bytes:
    try:
        return fh.read(size)
    except (OSError, EOFError, io.UnsupportedOperation, ValueError) as exc:
        raise DataError(f"{uri}: cannot be read to its end ({exc}); nothing of it was loaded") from None
    except Exception as exc:  # zstandard raises its own ZstdError
        if type(exc).__name__ == "ZstdError":
            raise DataError(
                f"{uri}: cannot be read to its end ({exc}); nothing of it was loaded"
            ) from None
        raise


def _read_checked(fh: BinaryIO, uri: str) -> bytes:
    chunks: list[bytes] = []
    while True:
        block = _read_block(fh, 1 << 22, uri)
        if not block:
            return b"".join(chunks)
        chunks.append(block)


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
        """True when this adapter reads the file (sniff extension / first records)."""

    def episodes(self, source: Source) -> Iterator[tuple[int, dict[str, Any]] | Quarantined]:
        """Yield ``(line, native_episode_dict)`` or `Quarantined`, in file order."""
