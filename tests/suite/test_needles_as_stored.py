"""The needle prefilter searched in text as stored (tracelab.engine.needles.prefilter_re2 with
lower_moved): it finds a text exactly when the lower-cased pattern finds the text's lower(), so
the check lower-cases only the fragments it keeps."""
from __future__ import annotations

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tracelab.engine.needles import lower_moved, prefilter_re2

# characters DuckDB's lower() treats apart from Python's or RE2's case folding: İ -> i, the
# Kelvin sign -> k, the Ångström sign -> å, ϴ -> θ, Ω (ohm) -> ω, Σ -> σ (never ς), titlecase ǅ
TRICKY = ("\u0130iI\u0131\u212akK\u212b\u00e5\u00c5\u03f4\u03b8\u0398"
          "\u2126\u03c9\u03a9\u03a3\u03c3\u03c2\u01c5\u01c6\u01c4")
ALPHABET = TRICKY + "aB.*[]^-\\ é"


@pytest.fixture(scope="module")
def con():
    with duckdb.connect() as connection:
        yield connection


def lowered(con, texts: list[str]) -> list[str]:
    [(out,)] = con.execute("SELECT list_transform($t::VARCHAR[], lambda x: lower(x))",
                           {"t": texts}).fetchall()
    return out


def found(con, text: str, pattern: str, *, lower: bool = False) -> bool:
    query = "SELECT regexp_matches(lower(?), ?)" if lower else "SELECT regexp_matches(?, ?)"
    [(hit,)] = con.execute(query, [text, pattern]).fetchall()
    return hit


def test_lower_moved_holds_the_characters_lower_changes_one_for_one(con):
    moved = lower_moved()
    assert moved["A"] == "a" and moved["İ"] == "i" and moved["\u212a"] == "k" and moved["Σ"] == "σ"
    assert "a" not in moved and "ς" not in moved
    assert all(len(lower) == 1 for lower in moved.values())


def test_no_character_above_the_first_two_planes_lowers(con):
    # _lower_moved.sql asks the first two planes only: the others have no case
    [(moved,)] = con.execute(
        "SELECT count(*) FROM (SELECT chr(range::INTEGER) AS c FROM range(131072, 1114112)) WHERE lower(c) <> c"
    ).fetchall()
    assert moved == 0
    assert len(lower_moved()) > 1000 and lower_moved(con) is lower_moved()


def test_each_character_stands_for_every_character_that_lowers_to_it(con):
    pattern = prefilter_re2(["ik"], lower_moved())
    assert pattern == "[iI\u0130][kK\u212a]"
    for text in ("ik", "IK", "\u0130\u212a", "iK"):
        assert found(con, text, pattern), text
    assert not found(con, "\u0131k", pattern)  # dotless i lowers to itself


def test_hostile_needles_stay_literal(con):
    moved = lower_moved()
    for needle in ["a.c*(d)+[e]?", "^$|\\d{2}", "[]", "-", "\\q"]:
        assert found(con, f"<<{needle.upper()}>>", prefilter_re2(lowered(con, [needle]), moved))
    assert not found(con, "abcd", prefilter_re2(["a.c*(d)+[e]?"], moved))


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=ALPHABET, max_size=12),
       needles=st.lists(st.text(alphabet=ALPHABET, min_size=1, max_size=4), min_size=1, max_size=4))
def test_the_stored_text_is_found_exactly_when_its_lower_is(con, text, needles):
    needles = lowered(con, needles)
    as_stored = found(con, text, prefilter_re2(needles, lower_moved()))
    assert as_stored == found(con, text, prefilter_re2(needles), lower=True)
