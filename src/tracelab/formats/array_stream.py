"""A `.json` file too large to parse whole whose document is an array: its elements, one at a
time, as JSON Lines are read line by line (docs/trace-format.md §6: memory bounded by the
largest record, not by the file).

Each element is found with the standard library's decoder (which reports where a value ends),
then parsed by `parse_json` from its own text, so an element reads exactly as the same record
on a line of JSON Lines would. An element over `RECORD_LIMIT` is quarantined with its size;
text that is not an array of values (a bad element, a cut file) quarantines the rest of the
file from that point, as one row, after every element before it loaded.
"""
from __future__ import annotations

import codecs
import json
from collections.abc import Generator, Iterator
from typing import Any

from tracelab.formats import source as base
from tracelab.formats.base import Quarantined
from tracelab.formats.source import BadJSON, Source, parse_json

_BLOCK = 1 << 22
_SPACE = " \t\n\r"


class _Cut(Exception):
    """The array's text stops being an array here: the reason, for the quarantine row."""


def array_elements(source: Source) -> Generator[tuple[int, Any, bytes] | Quarantined, None, None]:
    """``(position, element, raw)`` for each element of the file's top-level array, from 1;
    `Quarantined` for an element that is not strict JSON or is too large. Closing the generator
    closes the file."""
    reader = _Reader(source)
    try:
        yield from _elements(reader)
    finally:
        reader.close()


def _elements(reader: _Reader) -> Iterator[tuple[int, Any, bytes] | Quarantined]:
    position = 0
    try:
        reader.expect("[")
        if reader.peek() == "]":
            return
        while True:
            position += 1
            raw = reader.element()
            if raw is None:
                yield Quarantined(position, base.too_large(reader.skipped), None)
            else:
                try:
                    yield position, parse_json(raw), raw
                except BadJSON as exc:
                    yield Quarantined(position, str(exc), raw[: base.RAW_LIMIT])
            if reader.expect(",]") == "]":
                return
    except _Cut as cut:
        yield Quarantined(position or 1, f"element {position or 1} and after: {cut}; nothing after it was loaded",
                          reader.rest())


class _Reader:
    """The array's text, decoded as it is read, a window of it at a time."""

    def __init__(self, source: Source) -> None:
        self._fh = source.open()
        self._utf8 = codecs.getincrementaldecoder("utf-8-sig")()
        self._text = ""
        self._pos = 0
        self._eof = False
        self.skipped = 0

    def close(self) -> None:
        self._fh.close()

    def _more(self, size: int = _BLOCK) -> bool:
        """Read on; False at the end of the file."""
        if self._eof:
            return False
        block = base._read_block(self._fh, size, "")
        try:
            text = self._utf8.decode(block, final=not block)
        except UnicodeDecodeError as exc:
            raise _Cut(f"not valid UTF-8 (byte {exc.start} of a block)") from None
        if not block:
            self._eof = True
        self._text = self._text[self._pos:] + text
        self._pos = 0
        return bool(block) or bool(text)

    def peek(self) -> str:
        """The next character that is not white space ('' at the end)."""
        while True:
            while self._pos < len(self._text) and self._text[self._pos] in _SPACE:
                self._pos += 1
            if self._pos < len(self._text):
                return self._text[self._pos]
            if not self._more():
                return ""

    def expect(self, allowed: str) -> str:
        char = self.peek()
        if not char or char not in allowed:
            wanted = " or ".join(f"'{c}'" for c in allowed)
            raise _Cut(f"expected {wanted}, found {'the end of the file' if not char else repr(char)}")
        self._pos += 1
        return char

    def element(self) -> bytes | None:
        """The next element's text as UTF-8; None for one longer than RECORD_LIMIT (skipped)."""
        decoder = json.JSONDecoder()
        self.peek()
        size, problem = _BLOCK, ""
        while True:
            try:
                _, end = decoder.raw_decode(self._text, self._pos)
            except json.JSONDecodeError as exc:
                end = -1
                problem = exc.msg
            except RecursionError:
                end, problem = -1, "nested too deep"
            # a value that ends where the text read so far ends may go on (a number, `tru`)
            if end != -1 and (end < len(self._text) or self._eof):
                raw = self._text[self._pos:end].encode()
                self._pos = end
                if len(raw) > base.RECORD_LIMIT:
                    self.skipped = len(raw)
                    return None
                return raw
            if len(self._text) - self._pos > base.RECORD_LIMIT:
                self._skip_oversized()
                return None
            size = min(size * 2, base.RECORD_LIMIT)  # growing blocks: each retry parses from the start
            if not self._more(size):
                raise _Cut(f"invalid JSON ({problem})" if end == -1 else "the file ends inside an element")

    def _skip_oversized(self) -> None:
        """Skip an element too large to hold, counting its characters, to its end at depth 0."""
        depth, in_string, escaped, count = 0, False, False, 0
        while True:
            text, start = self._text, self._pos
            for index in range(start, len(text)):
                char = text[index]
                if in_string:
                    if escaped:
                        escaped = False
                    elif char == "\\":
                        escaped = True
                    elif char == '"':
                        in_string = False
                elif char == '"':
                    in_string = True
                elif char in "[{":
                    depth += 1
                elif char in "]}":
                    if depth == 0:
                        self._pos, self.skipped = index, count + index - start
                        return
                    depth -= 1
                elif char == "," and depth == 0:
                    self._pos, self.skipped = index, count + index - start
                    return
            count += len(text) - start
            self._pos = len(text)
            if not self._more():
                raise _Cut("the file ends inside an element")

    def rest(self) -> bytes:
        """What the quarantine row keeps of the text from the cut: its first RAW_LIMIT bytes."""
        return self._text[self._pos:self._pos + base.RAW_LIMIT].encode()[: base.RAW_LIMIT]
