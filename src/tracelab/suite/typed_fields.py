"""Typed reading of one mapping of a suite: unknown keys refused, types checked, lines kept.

Every refusal is a `SuiteError` whose one-line message names the file, the line
(when known), the case and the key, and says how to fix it (docs/suites.md §1, §7).
"""
from __future__ import annotations

import datetime as dt
import difflib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar, overload

from tracelab.documents import line_of, raw_of
from tracelab.errors import SuiteError

C = TypeVar("C", bound=str)
"""A choice among fixed strings (often a `Literal`)."""


@dataclass(frozen=True)
class Ctx:
    """Where a value sits: the file as shown to the user, the case, and the key path."""

    path: str
    case: str | None = None
    key: str = ""
    note: str = ""
    """Appended to every message, e.g. why the file was read as an Assay eval.yaml."""

    def at(self, key: str | int) -> Ctx:
        """The context of a sub-key (`name`) or list item (`3`)."""
        if isinstance(key, int):
            return Ctx(self.path, self.case, f"{self.key}[{key}]", self.note)
        return Ctx(self.path, self.case, f"{self.key}.{key}" if self.key else key, self.note)

    def in_case(self, case: str | None) -> Ctx:
        """The same position, inside case `case` with an empty key path."""
        return Ctx(self.path, case, "", self.note)

    def error(self, message: str, line: int | None = None) -> SuiteError:
        """A SuiteError: `file:line: case 'x': key 'k': message`."""
        parts = [f"{self.path}:{line}" if line else self.path]
        if self.case is not None:
            parts.append(f"case {self.case!r}")
        if self.key:
            parts.append(f"key {self.key!r}")
        return SuiteError(": ".join(parts) + f": {message}{self.note}")


def describe(value: Any, raw: str | None = None) -> str:
    """How a wrongly typed value reads in a message, with a quoting hint for scalars."""
    if value is None:
        return "null (an empty value)"
    if isinstance(value, bool):
        what = f"the boolean {str(value).lower()}"
    elif isinstance(value, (int, float)):
        what = f"the number {value}"
    elif isinstance(value, (dt.date, dt.datetime)):
        what = f"the date {value.isoformat()}"
    elif isinstance(value, str):
        return f"the string {value!r}"
    elif isinstance(value, Mapping):
        return "a mapping"
    elif isinstance(value, list):
        return "a list"
    else:
        return f"a {type(value).__name__}"
    if raw:
        return f'{what} (written {raw}); quote it if you meant the string: "{raw}"'
    return what


class Fields:
    """A mapping being read. Construction refuses unknown (and non-string) keys."""

    def __init__(self, data: Any, ctx: Ctx, allowed: Iterable[str], what: str,
                 line: int | None = None) -> None:
        if not isinstance(data, Mapping):
            raise ctx.error(f"{what} must be a mapping, got {describe(data)}", line)
        self.data = data
        self.ctx = ctx
        self.what = what
        allowed = tuple(allowed)
        for key in data:
            if not isinstance(key, str):
                raise ctx.error(
                    f"keys of {what} must be strings, got {describe(key)}", line_of(data, key)
                )
            if key not in allowed:
                raise self._unknown(key, allowed)

    def _unknown(self, key: str, allowed: tuple[str, ...]) -> SuiteError:
        close = difflib.get_close_matches(key, allowed, n=1) or [
            known for known in allowed if known.startswith(key) or key.startswith(known)]
        hint = f"; did you mean {close[0]!r}?" if close else ""
        known = ", ".join(allowed) if allowed else "none"
        return self.ctx.at(key).error(
            f"unknown key in {self.what}{hint} (allowed: {known})", self.line(key)
        )

    # --- position --------------------------------------------------------------------

    @property
    def own_line(self) -> int | None:
        """The line of the mapping itself."""
        return line_of(self.data)

    def line(self, key: str) -> int | None:
        """The line of `key` (or of the mapping when the key is absent)."""
        return line_of(self.data, key) if key in self.data else self.own_line

    def has(self, key: str) -> bool:
        """True when the key is present (even with a null value)."""
        return key in self.data

    def keys(self) -> list[str]:
        """The keys present, in file order."""
        return list(self.data)

    def err(self, key: str, message: str) -> SuiteError:
        """A SuiteError about `key` of this mapping."""
        return self.ctx.at(key).error(message, self.line(key))

    def require(self, *keys: str) -> None:
        """Refuse a missing key (listed in order)."""
        for key in keys:
            if key not in self.data:
                raise self.ctx.error(f"{self.what} needs the key {key!r}", self.own_line)

    # --- scalars ---------------------------------------------------------------------

    def get(self, key: str, default: Any = None) -> Any:
        """The raw value of `key`."""
        return self.data.get(key, default)

    @overload
    def string(self, key: str, default: str) -> str: ...
    @overload
    def string(self, key: str, default: None = None) -> str | None: ...

    def string(self, key: str, default: str | None = None) -> str | None:
        """A string value (a YAML bool, number or date is refused, with a quoting hint)."""
        if key not in self.data:
            return default
        return self.need_string(key)

    def need_string(self, key: str) -> str:
        """The string at a key that must be present."""
        self.require(key)
        return check_str(self.data[key], self.ctx.at(key), self.line(key), raw_of(self.data, key))

    @overload
    def boolean(self, key: str, default: bool) -> bool: ...
    @overload
    def boolean(self, key: str, default: None = None) -> bool | None: ...

    def boolean(self, key: str, default: bool | None = None) -> bool | None:
        """A boolean value: `true` or `false`."""
        if key not in self.data:
            return default
        return self.need_boolean(key)

    def need_boolean(self, key: str) -> bool:
        """The boolean at a key that must be present."""
        self.require(key)
        value = self.data[key]
        if not isinstance(value, bool):
            raise self.err(key, f"expected true or false, got {describe(value)}")
        return value

    @overload
    def integer(self, key: str, default: int, minimum: int | None = None) -> int: ...
    @overload
    def integer(self, key: str, default: None = None, minimum: int | None = None) -> int | None: ...

    def integer(self, key: str, default: int | None = None, minimum: int | None = None
                ) -> int | None:
        """An integer (a boolean is not one), at least `minimum` when given."""
        if key not in self.data:
            return default
        return self.need_integer(key, minimum)

    def need_integer(self, key: str, minimum: int | None = None) -> int:
        """The integer at a key that must be present, at least `minimum` when given."""
        self.require(key)
        return check_int(self.data[key], self.ctx.at(key), self.line(key), minimum)

    @overload
    def number(self, key: str, default: float) -> float: ...
    @overload
    def number(self, key: str, default: None = None) -> float | None: ...

    def number(self, key: str, default: float | None = None) -> float | None:
        """A number (integer or decimal; a boolean is not one)."""
        if key not in self.data:
            return default
        value = self.data[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.err(key, f"expected a number, got {describe(value, raw_of(self.data, key))}")
        return float(value)

    # --- collections -----------------------------------------------------------------

    def items(self, key: str) -> Iterator[tuple[Any, Ctx, int | None, str | None]]:
        """(item, ctx, line, raw) for each item of the list at `key` (a list is required)."""
        value = self.data[key]
        if not isinstance(value, list):
            raise self.err(key, f"expected a list, got {describe(value, raw_of(self.data, key))}")
        for index, item in enumerate(value):
            yield item, self.ctx.at(key).at(index), line_of(value, index), raw_of(value, index)

    def strings(self, key: str) -> tuple[str, ...] | None:
        """A list of strings, or None when the key is absent."""
        return self.need_strings(key) if key in self.data else None

    def need_strings(self, key: str) -> tuple[str, ...]:
        """The list of strings at a key that must be present."""
        self.require(key)
        return tuple(check_str(item, ctx, line, raw) for item, ctx, line, raw in self.items(key))

    def choices(self, key: str, allowed: tuple[C, ...], what: str) -> tuple[C, ...] | None:
        """A list of strings each one of `allowed` (e.g. step kinds), or None when absent."""
        if key not in self.data:
            return None
        return tuple(self.choice(item, ctx, line, raw, allowed, what)
                     for item, ctx, line, raw in self.items(key))

    @staticmethod
    def choice(item: Any, ctx: Ctx, line: int | None, raw: str | None, allowed: tuple[C, ...], what: str) -> C:
        """`item` as the element of `allowed` it equals (so a `Literal` type survives)."""
        value = check_str(item, ctx, line, raw)
        if value not in allowed:
            raise ctx.error(f"{value!r} is not {what} (use {', '.join(allowed)})", line)
        return allowed[allowed.index(value)]

    def sub(self, key: str, allowed: Iterable[str], what: str) -> Fields:
        """The mapping at `key`, read with its own allowed keys."""
        return Fields(self.data[key], self.ctx.at(key), allowed, what, self.line(key))


def check_str(value: Any, ctx: Ctx, line: int | None, raw: str | None = None) -> str:
    """`value` when it is a string; otherwise a SuiteError naming the key."""
    if not isinstance(value, str):
        raise ctx.error(f"expected a string, got {describe(value, raw)}", line)
    return value


MAX_INT = 2**63 - 1
"""Suite integers are stored as 64-bit integers; anything larger cannot be a count."""


def check_int(value: Any, ctx: Ctx, line: int | None, minimum: int | None = None) -> int:
    """`value` when it is an integer (not a boolean) of at least `minimum` and within 64 bits."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ctx.error(f"expected an integer, got {describe(value)}", line)
    if minimum is not None and value < minimum:
        raise ctx.error(f"must be at least {minimum}, got {value}", line)
    if not -MAX_INT <= value <= MAX_INT:
        raise ctx.error(f"must be at most {MAX_INT:,} (a 64-bit integer), got a {len(str(abs(value)))}-digit "
                        "number", line)
    return value
