"""Suite globs as RE2 patterns (docs/suites.md §7, docs/duckdb-notes.md §9).

A glob has `*`, `?`, `[...]` and `[!...]`, no escape character, and an
unclosed `[` is a literal. DuckDB's GLOB disagrees on both points and LIKE
treats `_` and `%` as wildcards, so globs are translated here and matched with
`regexp_full_match` against a bound pattern. Every character that is not an
ASCII letter or digit is written as `\\x{HEX}`, so no suite text can be read
as regex syntax.
"""
from __future__ import annotations

_NOTHING = r"[^\x{0}-\x{10FFFF}]"
_ANY = "."


def is_glob(text: str) -> bool:
    """True when `text` has a glob metacharacter (`*`, `?` or `[`)."""
    return any(ch in text for ch in "*?[")


def glob_to_re2(glob: str) -> str:
    """An RE2 pattern that `regexp_full_match` matches exactly when `glob` matches the whole text."""
    out = ["(?s)"]
    i = 0
    while i < len(glob):
        ch = glob[i]
        if ch == "*":
            out.append(".*")
            while i < len(glob) and glob[i] == "*":
                i += 1
            continue
        if ch == "?":
            out.append(_ANY)
        elif ch == "[":
            bracket = _bracket(glob, i)
            if bracket is not None:
                pattern, i = bracket
                out.append(pattern)
                continue
            out.append(_literal(ch))
        else:
            out.append(_literal(ch))
        i += 1
    return "".join(out)


def literal_re2(text: str) -> str:
    """An RE2 pattern that `regexp_full_match` matches only on `text` itself."""
    return "(?s)" + "".join(_literal(ch) for ch in text)


def _literal(ch: str) -> str:
    if ch.isascii() and ch.isalnum():
        return ch
    return _hex(ch)


def _hex(ch: str) -> str:
    return f"\\x{{{ord(ch):X}}}"


def _bracket(glob: str, start: int) -> tuple[str, int] | None:
    """The class starting at `glob[start] == '['` and the index after it; None when unclosed.

    As in fnmatch: `!` right after `[` negates, a `]` right after `[` or `[!`
    is a member, `a-z` is a range (an inverted range is empty), a `-` first or
    last is a member.
    """
    i = start + 1
    negate = glob[i : i + 1] == "!"
    if negate:
        i += 1
    body_start = i
    if glob[i : i + 1] == "]":
        i += 1
    close = glob.find("]", i)
    if close < 0:
        return None
    body = glob[body_start:close]
    items: list[str] = []
    k = 0
    while k < len(body):
        if k + 2 < len(body) and body[k + 1] == "-":
            low, high = body[k], body[k + 2]
            if low <= high:
                items.append(f"{_hex(low)}-{_hex(high)}")
            k += 3
        else:
            items.append(_hex(body[k]))
            k += 1
    if not items:
        return (_ANY if negate else _NOTHING), close + 1
    return f"[{'^' if negate else ''}{''.join(items)}]", close + 1


__all__ = ["glob_to_re2", "is_glob", "literal_re2"]
