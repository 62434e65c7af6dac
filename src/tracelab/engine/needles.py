"""The needles of `must_mention` and `must_not_leak` as one RE2 pattern: a one-pass prefilter.

Matching a thousand needles against every transcript fragment with `contains` costs
fragments x needles calls. One RE2 alternation of the (lower-cased) needles finds, in a
single pass, the few fragments that contain *some* needle; the exact `contains` join then
runs on those alone. The alternation only chooses fragments, never which needle matched,
so overlapping needles ("abc" and "bc") are all still reported.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from tracelab.sqlfiles import load_sql

if TYPE_CHECKING:
    import duckdb

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


def prefilter_re2(needles: Iterable[str]) -> str:
    """An RE2 pattern that `regexp_matches` finds in every text containing one of `needles`
    (already lower-cased, as the text is), and in few others.

    It is the alternation of the needles, each cut to its first `width` characters, with the
    widest cut that keeps the pattern within RE2_BUDGET: a text containing a needle contains
    its prefix, so no match is lost; a shorter prefix only lets more texts through.
    """
    distinct = sorted(set(needles))
    for width in _WIDTHS:
        pattern = "|".join(sorted({re2_literal(needle[:width]) for needle in distinct}))
        if len(pattern.encode()) <= RE2_BUDGET:
            return pattern
    return ""  # too many distinct first characters: let every fragment through


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


__all__ = ["RE2_BUDGET", "lower_needles", "prefilter_re2", "re2_literal"]
