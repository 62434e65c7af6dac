"""One input file as the adapters read it (`Source`): whole or streamed, plain, gzip or zstd,
hashed as it is read, its records parsed as JSON (`parse_json`) within the record limits
(docs/trace-format.md §6).
"""
from __future__ import annotations

import collections
import errno
import functools
import gzip
import hashlib
import io
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from tracelab.errors import DataError

RAW_LIMIT = 64 * 1024  # quarantine.raw keeps at most 64 KiB


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
    if isinstance(data, Oversized):
        raise BadJSON(too_large(data.size))
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


WHOLE_FILE_LIMIT = 16 << 20
"""Files up to this many bytes are read once, into memory: their hash and records come from the
same bytes. A larger file is hashed first and streamed after, its bytes hashed again as they are
read, so that a file that changed in between is reported, never recorded under the wrong hash."""


RECORD_LIMIT = 256 << 20
"""The largest record loaded, in bytes of JSON (docs/trace-format.md §6); a larger one is quarantined
with its size, and never held whole in memory."""


SAMPLE_RECORDS = 64


SAMPLE_BYTES = 64 << 20
"""Auto-detection samples the first 64 records that are JSON objects, from at most the first
64 MiB of a file (docs/formats.md, Auto-detection)."""


UNSET: Any = object()


class Oversized(bytes):
    """A line longer than `RECORD_LIMIT`: its first `RAW_LIMIT` bytes, and its full size.

    `parse_json` refuses it with the size as the reason, so every adapter quarantines it
    like any bad line, without the line ever being held whole in memory.
    """

    size: int

    def __new__(cls, head: bytes, size: int) -> Oversized:
        obj = super().__new__(cls, head[:RAW_LIMIT])
        obj.size = size
        return obj

    def __reduce__(self) -> tuple[type[Oversized], tuple[bytes, int]]:
        # pickled with its size (ingest hands lines to worker processes)
        return Oversized, (bytes(self), self.size)


def too_large(size: int) -> str:
    """The quarantine reason for a record of `size` bytes beyond `RECORD_LIMIT`."""
    return f"the record is {size:,} bytes of JSON; records over {RECORD_LIMIT >> 20} MiB are not loaded"


def display_path(path: Path | str) -> str:
    """The path as text, a name that is not valid UTF-8 shown with its bytes escaped (``\\xff``)."""
    text = str(path)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # undecodable bytes, kept by Python as lone surrogates
        return os.fsencode(text).decode("utf-8", errors="backslashreplace")
    return text


class Source:
    """One input file: its decompressed bytes, its lines, its content hash.

    Lines follow docs/trace-format.md §5: a line ends at LF only, a CR right before it
    is dropped, a leading BOM is ignored, whitespace-only lines are skipped
    (but counted for line numbers).

    A file of up to `WHOLE_FILE_LIMIT` bytes is read once: its content hash and everything
    read from it come from those bytes. A larger one is streamed, and a read to its end that
    does not hash to `content_hash` raises `DataError` (the file changed while it was read).
    """

    def __init__(self, path: Path | str, *, data: bytes | None = None, uri: str | None = None) -> None:
        self.location = os.fspath(path)
        """The path as given, as text: what the file is opened by (no `Path` is made per file of a
        folder of 100k: `path` is made when an adapter asks for it)."""
        self.uri = uri if uri is not None else display_path(self.location)
        self._data = data
        self._hash: str | None = None if data is None else hashlib.sha256(data).hexdigest()
        self._size: int | None = None if data is None else len(data)
        self.sniffed: Any = UNSET
        """Set by auto-detection: the sampled record `first_record` returns while formats
        are asked whether they claim it (docs/formats.md, Auto-detection)."""
        self.cache: dict[str, Any] = {}
        """What adapters compute once per file (a `.json` file's parsed document)."""
        self.stat: tuple[int, int] | None = None
        """The file's size and modification time (ns) just before it was read."""
        self.unread: collections.Counter[str] = collections.Counter()
        """Records of a type its adapter does not know (a newer version's), by type: they add
        no step and are not quarantined, and `sources.unread` counts them (docs/formats.md,
        Coding-agent sessions: forward compatibility)."""

    @functools.cached_property
    def path(self) -> Path:
        """The path as a `Path`."""
        return Path(self.location)

    @functools.cached_property
    def name(self) -> str:
        """The file's name, its last path component."""
        return os.path.basename(self.location)

    def _load(self) -> None:
        """Read the file: whole when small, else only its hash (it is streamed later).

        Few system calls per file (open, fstat, one read, close): a folder of 100k small files
        pays each of them 100k times. Opened non-blocking, so that a path that became a FIFO
        since it was listed is refused instead of read forever.
        """
        if self._hash is not None:
            return
        fd = os.open(self.location, os.O_RDONLY | os.O_NONBLOCK)
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise OSError(errno.EINVAL, "not a regular file")
            # taken before the read: a file changed after it differs on the next run, and is read again
            self.stat = (info.st_size, info.st_mtime_ns)
            expected = min(info.st_size, WHOLE_FILE_LIMIT)
            first = os.read(fd, expected + 1)
            if len(first) <= expected:  # a short read is the end of the file: read whole
                self._data, self._size = first, len(first)
                self._hash = hashlib.sha256(first).hexdigest()
                return
            digest = hashlib.sha256(first)
            kept: list[bytes] | None = [first]
            size = len(first)
            while block := os.read(fd, 1 << 20):
                digest.update(block)
                size += len(block)
                if kept is not None:
                    kept.append(block)
                if size > WHOLE_FILE_LIMIT:
                    kept = None  # too large to hold: hashed now, streamed when read
        finally:
            os.close(fd)
        if kept is not None:
            self._data = b"".join(kept)
        self._hash, self._size = digest.hexdigest(), size

    @property
    def content_hash(self) -> str:
        """SHA-256 of the file's bytes as stored (compressed files: of the compressed bytes)."""
        self._load()
        assert self._hash is not None
        return self._hash

    @property
    def size(self) -> int:
        """The file's size in bytes, as read."""
        self._load()
        assert self._size is not None
        return self._size

    @property
    def in_memory(self) -> bool:
        """True when the file was read whole (see `WHOLE_FILE_LIMIT`)."""
        self._load()
        return self._data is not None

    @property
    def data(self) -> bytes | None:
        """The file's bytes as stored, when it was read whole; None when it is streamed."""
        self._load()
        return self._data

    @functools.cached_property
    def stem_name(self) -> str:
        """The file name without compression suffix (``a.jsonl.gz`` -> ``a.jsonl``)."""
        name = self.name
        for suffix in (".gz", ".zst"):
            if name.endswith(suffix):
                return name[: -len(suffix)]
        return name

    def raw(self) -> BinaryIO:
        """The file's bytes as stored: from memory, or from disk checked against `content_hash`."""
        self._load()
        if self._data is not None:
            return io.BytesIO(self._data)
        try:
            return io.BufferedReader(_CheckedReader(self), buffer_size=1 << 20)
        except OSError as exc:
            raise DataError(f"{self.uri}: cannot be read to its end ({exc.strerror or exc}); "
                            "nothing of it was loaded") from None

    def open(self) -> BinaryIO:
        """The decompressed byte stream."""
        name = self.name
        if name.endswith(".gz"):
            return _GzipReader(self.raw())  # type: ignore[return-value]
        if name.endswith(".zst"):
            return io.BufferedReader(_ZstdReader(self.raw()), buffer_size=1 << 20)
        return self.raw()

    def read_all(self) -> bytes:
        """The whole decompressed content (for formats that are one JSON document).

        A content beyond `RECORD_LIMIT` is not read past the limit: the result is an
        `Oversized` holding its first bytes, which `parse_json` refuses with the size.
        """
        with self.open() as fh:
            data = _read_checked(fh, self.uri, RECORD_LIMIT + 4)
            if len(data) > RECORD_LIMIT + 3:
                size = len(data) + _skip(fh, self.uri)
                return Oversized(data, size)
        return data[3:] if data.startswith(b"\xef\xbb\xbf") else data

    def head(self, limit: int = RAW_LIMIT) -> bytes:
        """The first `limit` decompressed bytes (what a quarantine row keeps of a whole file)."""
        with self.open() as fh:
            return _read_block(fh, limit, self.uri)

    def lines(self, chunk_size: int = 1 << 22, limit: int | None = None) -> Iterator[tuple[int, bytes]]:
        """Yield ``(line_number, line_bytes)`` for every non-blank line, 1-based.

        A line longer than `RECORD_LIMIT` comes as an `Oversized` (never held whole). With a
        `limit`, only the lines that end within the first `limit` decompressed bytes (what
        auto-detection samples: a line of gigabytes is not read to its end to be sniffed).
        """
        if self._data is not None and self.stem_name == self.name:
            # in memory already: split once, for auto-detection's sample and the adapter alike
            if "lines" not in self.cache:
                self.cache["lines"] = list(self._lines(len(self._data) + 1))
            yield from self.cache["lines"]
            return
        yield from self._lines(chunk_size, limit)

    def release(self) -> None:
        """Drop the bytes read and what was parsed from them; the hash and size stay (a later
        read streams from disk, checked against the hash)."""
        self._load()
        self._data = None
        self.cache.clear()

    def _lines(self, chunk_size: int, limit: int | None = None) -> Iterator[tuple[int, bytes]]:
        number = consumed = 0
        pieces: list[bytes] = []  # the line still open at the end of the last block
        pending_size = 0  # bytes in `pieces`, counted on after an oversized line stops keeping them
        oversized = False
        first = True
        with self.open() as fh:
            while True:
                if limit is not None and consumed >= limit:
                    return
                block = _read_block(fh, chunk_size, self.uri)
                if not block:
                    break
                consumed += len(block)
                if first:
                    if block.startswith(b"\xef\xbb\xbf"):
                        block = block[3:]
                    first = False
                parts = block.split(b"\n")
                if pieces and len(parts) > 1:
                    # a long line is joined once, when it ends (joining at every block is quadratic)
                    if oversized:
                        parts[0] = Oversized(pieces[0], pending_size + len(parts[0]))
                    else:
                        parts[0] = b"".join([*pieces, parts[0]])
                    pieces, pending_size, oversized = [], 0, False
                last = parts.pop()
                for part in parts:
                    number += 1
                    if len(part) > RECORD_LIMIT and not isinstance(part, Oversized):
                        part = Oversized(part, len(part))
                    if part.endswith(b"\r") and not isinstance(part, Oversized):
                        part = part[:-1]
                    if isinstance(part, Oversized) or part.strip():
                        yield number, part
                pending_size += len(last)
                if oversized:
                    continue
                pieces.append(last)
                if pending_size > RECORD_LIMIT:
                    # keep only the head of the line from here on (memory stays bounded)
                    pieces, oversized = [_head_of(pieces)], True
            if oversized:
                number += 1
                yield number, Oversized(pieces[0], pending_size)
                return
            pending = b"".join(pieces)
            if pending:
                number += 1
                if pending.endswith(b"\r"):
                    pending = pending[:-1]
                if pending.strip():
                    yield number, pending

    def first_record(self) -> Any:
        """The first non-blank line parsed as JSON, or None when it does not parse.

        During auto-detection: the sampled record being tried (`sniffed`).
        """
        if self.sniffed is not UNSET:
            return self.sniffed
        if "first_record" not in self.cache:  # every format's `claims` asks: read it once
            self.cache["first_record"] = None
            for _, line in self.lines(chunk_size=1 << 16, limit=SAMPLE_BYTES):
                try:
                    self.cache["first_record"] = parse_json(line)
                except BadJSON:
                    pass
                break
        return self.cache["first_record"]


def _head_of(pieces: list[bytes]) -> bytes:
    """The first `RAW_LIMIT` bytes of the pieces of a line, joined."""
    out = bytearray()
    for piece in pieces:
        out += piece[:RAW_LIMIT - len(out)]
        if len(out) >= RAW_LIMIT:
            break
    return bytes(out)


class _GzipReader(gzip.GzipFile):
    """A gzip stream over a file object it owns (closing it closes that too)."""

    def __init__(self, raw: BinaryIO) -> None:
        super().__init__(fileobj=raw, mode="rb")
        self._raw = raw

    def close(self) -> None:
        try:
            super().close()
        finally:
            self._raw.close()


class _CheckedReader(io.RawIOBase):
    """A large file's bytes from disk, hashed as they are read: at the end, they must hash to
    the content hash taken before, or the file changed while it was read (`DataError`)."""

    def __init__(self, source: Source) -> None:
        super().__init__()
        self._source = source
        self._fh = open(source.location, "rb")
        self._digest = hashlib.sha256()
        self._checked = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = self._fh.readinto(buffer)
        if n:
            self._digest.update(memoryview(buffer)[:n])
        elif not self._checked:
            self._checked = True
            if self._digest.hexdigest() != self._source.content_hash:
                raise DataError(f"{self._source.uri}: changed while it was read; nothing of it was loaded")
        return n

    def close(self) -> None:
        self._fh.close()
        super().close()


class _ZstdReader(io.RawIOBase):
    """Every zstd frame of a file, decompressed; input that ends inside a frame is an `EOFError`.

    python-zstandard's own stream reader ends quietly at a truncated frame, so a cut
    file would load in part; this reader fails like a truncated gzip instead.
    """

    OUTPUT_STEP = 4 << 20
    """Decompressed bytes aimed at per step: the next piece fed is sized by the last step's
    ratio (from 64 bytes to 1 MiB), so a sudden run of zeros overshoots it only once."""

    def __init__(self, raw: BinaryIO) -> None:
        import zstandard

        super().__init__()
        self._fh = raw
        self._dctx = zstandard.ZstdDecompressor()
        self._frame = self._dctx.decompressobj()
        self._in_frame = False
        self._out = b""
        self._pos = 0
        self._input = b""
        self._feed = 1 << 10

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while self._pos == len(self._out):
            if not self._input:
                self._input = self._fh.read(1 << 20)
                if not self._input:
                    if self._in_frame:
                        raise EOFError("the zstd stream ends inside a frame (the file is truncated)")
                    return 0
            # fed a piece at a time, sized so that the output stays near OUTPUT_STEP: a few
            # kilobytes of zstd can stand for gigabytes (one line of 4 GB in 132 KB)
            piece, self._input = self._input[:self._feed], self._input[self._feed:]
            self._out, self._pos = self._decompress(piece), 0
            ratio = max(len(self._out), 1) / len(piece)
            self._feed = int(min(max(self.OUTPUT_STEP / ratio, 64), 1 << 20))
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


def _read_checked(fh: BinaryIO, uri: str, limit: int) -> bytes:
    """Up to `limit` bytes of `fh` (all of it when shorter)."""
    chunks: list[bytes] = []
    size = 0
    while size < limit:
        block = _read_block(fh, min(1 << 22, limit - size), uri)
        if not block:
            break
        chunks.append(block)
        size += len(block)
    return b"".join(chunks)


def _skip(fh: BinaryIO, uri: str) -> int:
    """Read `fh` to its end without keeping it; how many bytes that was."""
    size = 0
    while block := _read_block(fh, 1 << 22, uri):
        size += len(block)
    return size
