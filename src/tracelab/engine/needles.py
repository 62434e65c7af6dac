"""The needles of `must_mention` and `must_not_leak` as one RE2 pattern: a one-pass prefilter.

Matching a thousand needles against every transcript fragment with `contains` costs
fragments x needles calls. One RE2 alternation of the (lower-cased) needles finds, in a
single pass, the few fragments that contain *some* needle; the exact `contains` join then
runs on those alone. The alternation only chooses fragments, never which needle matched,
so overlapping needles ("abc" and "bc") are all still reported.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from tracelab.sqlfiles import load_sql

if TYPE_CHECKING:
    import duckdb
    import polars as pl

    from tracelab.engine.compile import Plan

RE2_BUDGET = 16_000
"""The largest pattern, in UTF-8 bytes, the prefilter uses. DuckDB builds RE2 with its
default 8 MiB memory limit, under which a program of more than about 20,000 instructions
leaves the fast DFA no room: every search then falls back to the much slower NFA.
A byte of pattern compiles to at most one instruction, so the budget keeps the DFA."""

_NEEDLE_TABLES = {"must_mention": "p_must_mention", "must_not_leak": "p_must_not_leak"}
_WIDTHS = (None, 32, 24, 16, 12, 8, 6, 4, 3, 2, 1)


def re2_literal(text: str) -> str:
    """`text` as an RE2 pattern that matches exactly it: every ASCII character that is not a
    letter or digit is escaped with a backslash (RE2 reads an escaped non-word character as
    itself); non-ASCII characters stand for themselves."""
    return "".join("\\" + ch if ch.isascii() and not ch.isalnum() else ch for ch in text)


def prefilter_re2(needles: Iterable[str], moved: Mapping[str, str] | None = None) -> str:
    """An RE2 pattern that `regexp_matches` finds in every text containing one of `needles`
    (already lower-cased, as the text is), and in few others.

    It is the alternation of the needles, each cut to its first `width` characters, with the
    widest cut that keeps the pattern within RE2_BUDGET: a text containing a needle contains
    its prefix, so no match is lost; a shorter prefix only lets more texts through.

    With `moved` (`lower_moved`: every character DuckDB's lower() changes, to what), the pattern
    is for the text as stored, not lower-cased: each character of a needle stands for every
    character that lower() turns into it, so the pattern finds a text exactly when it finds
    that text's lower() without `moved`, and no text is lower-cased to be searched.
    """
    distinct = sorted(set(needles))
    sources = _sources(moved) if moved is not None else None
    for width in _WIDTHS:
        pattern = "|".join(sorted({_re2_cut(needle[:width], sources) for needle in distinct}))
        if len(pattern.encode()) <= RE2_BUDGET:
            return pattern
    return ""  # too many distinct first characters: let every fragment through


def _re2_cut(text: str, sources: Mapping[str, list[str]] | None) -> str:
    """`text` as an RE2 pattern: literally, or (with `sources`) each character as the class of
    the characters that lower-case to it."""
    if sources is None:
        return re2_literal(text)
    return "".join(_re2_class(sources.get(ch, [ch])) for ch in text)


def _re2_class(chars: list[str]) -> str:
    body = "".join(re2_literal(ch) for ch in chars)
    return body if len(chars) == 1 else f"[{body}]"


def _sources(moved: Mapping[str, str]) -> dict[str, list[str]]:
    """Per lower-cased character that some other character lowers to: every character whose
    lower() it is (itself first, unless lower() changes it too)."""
    sources: dict[str, list[str]] = {}
    for upper, lowered in moved.items():
        sources.setdefault(lowered, [] if lowered in moved else [lowered]).append(upper)
    return sources


_MOVED: dict[str, dict[str, str]] = {}
"""lower_moved's answer per DuckDB version."""


def lower_moved(con: duckdb.DuckDBPyConnection | None = None) -> dict[str, str]:
    """Every character DuckDB's lower() changes, and what it changes it to: asked once per process
    (on `con`, else an in-memory database), since it depends on DuckDB's version alone, never on a
    store."""
    import duckdb

    if duckdb.__version__ not in _MOVED:
        if con is None:
            with duckdb.connect() as own:
                rows = own.execute(load_sql("engine/assertions/_lower_moved")).fetchall()
        else:
            rows = con.execute(load_sql("engine/assertions/_lower_moved")).fetchall()
        _MOVED[duckdb.__version__] = dict(rows)
    return _MOVED[duckdb.__version__]


def lower_needles(con: duckdb.DuckDBPyConnection, plan: Plan) -> dict[str, list[str]]:
    """The needles of each needle family (must_mention, must_not_leak) of `plan`, lower-cased
    by DuckDB's lower() in one query."""
    needles = {family: plan.frames[table]["needle"].to_list()
               for family, table in _NEEDLE_TABLES.items()}
    [(lowered,)] = con.execute(load_sql("engine/assertions/_lower"),
                               {"texts": [n for family in needles.values() for n in family]}
                               ).fetchall()
    out, start = {}, 0
    for family, items in needles.items():
        out[family] = lowered[start:start + len(items)]
        start += len(items)
    return out




_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
"""A JSON string literal: how every reason quotes a stored string (`to_json`)."""


def notice(strings: Iterable[str], field: str | None = None) -> str:
    """What stands in place of a text that holds leaked strings: which strings it held, never
    the text (README "Leak hygiene"). `field` names what was withheld (`tool name`, `output`)."""
    found = tuple(strings)
    names = ", ".join(json.dumps(s, ensure_ascii=False) for s in found)
    what = f"{field} withheld" if field else "withheld"
    return f"[{what}: it holds the leaked string{'s' if len(found) > 1 else ''} {names}]"


def withhold_reasons(verdicts: pl.DataFrame, needles: Iterable[str]) -> pl.DataFrame:
    """`verdicts` with every stored string a reason quotes (a tool name, a termination) that
    holds one of `needles` (case-insensitively, as must_not_leak searches) replaced by `notice`;
    a reason holding a needle outside any quoted string is replaced whole. A must_not_leak
    reason names its string and is kept. Only the few rows that hold a needle are looked at."""
    import polars as pl

    needles = sorted({n for n in needles if n})
    if not needles or verdicts.height == 0:
        return verdicts
    lowered = [n.lower() for n in needles]
    # ASCII needles are found without lower-casing every reason (a quarter of the time at 15M rows)
    plain = [n for n in needles if n.isascii()]
    other = [n.lower() for n in needles if not n.isascii()]
    found = pl.col("reason").str.contains_any(plain, ascii_case_insensitive=True) if plain else pl.lit(False)
    if other:
        found = found | pl.col("reason").str.to_lowercase().str.contains_any(other)
    hit = found.fill_null(False) & (pl.col("assertion_type") != "must_not_leak")
    if not verdicts.select(hit.any()).item():
        return verdicts
    pairs = list(zip(needles, lowered, strict=True))
    return verdicts.with_columns(reason=pl.when(hit).then(
        pl.col("reason").map_elements(lambda reason: _withheld_reason(reason, pairs), return_dtype=pl.Utf8)
    ).otherwise(pl.col("reason")))


def _withheld_reason(reason: str, needles: list[tuple[str, str]]) -> str:
    def held(text: str) -> list[str]:
        low = text.lower()
        return [needle for needle, lowered in needles if lowered in low]

    parts, outside, end = [], [], 0
    for match in _JSON_STRING.finditer(reason):
        outside.append(reason[end:match.start()])
        parts += [reason[end:match.start()], match.group(0)]
        try:
            text = json.loads(match.group(0))
        except ValueError:
            text = match.group(0)
        if found := held(text if isinstance(text, str) else match.group(0)):
            parts[-1] = notice(found)
        end = match.end()
    outside.append(reason[end:])
    if found := held("\n".join(outside)):
        return notice(found)
    return "".join(parts) + reason[end:]


__all__ = ["RE2_BUDGET", "lower_moved", "lower_needles", "notice", "prefilter_re2", "re2_literal", "withhold_reasons"]
