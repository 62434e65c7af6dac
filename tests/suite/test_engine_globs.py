"""Suite globs translated to RE2 (suite.md §7, duckdb-notes §9), run through DuckDB itself."""
from __future__ import annotations

import fnmatch

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tracelab.globs import glob_to_re2, is_glob, literal_re2

# characters that mean something to globs, regexes, LIKE or SQL, and a few ordinary ones
ALPHABET = "ab-]![*?.\\^$%_'\"\n(|)+{}é"


@pytest.fixture(scope="module")
def con():
    with duckdb.connect() as connection:
        yield connection


def matches(con, pattern: str, texts: list[str]) -> list[bool]:
    rows = con.execute("SELECT regexp_full_match(t, ?) FROM unnest(?::VARCHAR[]) AS u(t)",
                       [pattern, texts]).fetchall()
    return [row[0] for row in rows]


@settings(max_examples=300, deadline=None)
@given(glob=st.text(ALPHABET, max_size=8), texts=st.lists(st.text(ALPHABET, max_size=6),
                                                           min_size=1, max_size=8))
def test_globs_match_like_fnmatch_without_escapes(con, glob, texts):
    # Python's fnmatch has the contract's semantics: *, ?, [...], [!...], no escape
    # character, an unclosed [ is literal
    assert matches(con, glob_to_re2(glob), texts) == [fnmatch.fnmatchcase(t, glob) for t in texts]


@settings(max_examples=200, deadline=None)
@given(text=st.text(ALPHABET, max_size=8), other=st.text(ALPHABET, max_size=8))
def test_literal_patterns_match_only_the_text_itself(con, text, other):
    assert matches(con, literal_re2(text), [text, other]) == [True, other == text]


@pytest.mark.parametrize(("glob", "text", "expected"), [
    ("1.4.*", "1.4.2", True),
    ("1.4.*", "1.40", False),
    ("send_*", "send_mail", True),
    ("send_*", "sendXmail", False),
    ("a[b", "a[b", True),
    ("a[b", "ab", False),
    ("[!a]x", "bx", True),
    ("[!a]x", "ax", False),
    ("[]]", "]", True),
    ("a\\*", "a\\bc", True),
    ("*", "", True),
    ("?", "é", True),
    ("[z-a]", "m", False),
])
def test_documented_glob_cases(con, glob, text, expected):
    assert matches(con, glob_to_re2(glob), [text]) == [expected]


def test_tools_keys_are_globs_only_with_metacharacters():
    assert [is_glob(k) for k in ("send_*", "a?", "a[b", "send_mail", "a.b")] == [
        True, True, True, False, False]
