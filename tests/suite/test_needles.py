"""The RE2 prefilter of must_mention / must_not_leak needles (tracelab.engine.needles): literal,
never losing a match, within RE2's budget; and the engine's verdicts with hostile needles."""
from __future__ import annotations

import json

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.suite.engine_support import Checker, ep, verdicts
from tracelab.engine.needles import RE2_BUDGET, prefilter_re2, re2_literal

HOSTILE = ["a.c*(d)+[e]?", "^$|\\d{2}", "100%", "a_c", "it's", 'say "hi"', "C:\\temp\\new",
           "abc", "bc", "İSTANBUL", "ΣΟΦΙΑΣ", "{1,2}", "x\ty", "(?i)", "\\Q.\\E"]


@pytest.fixture(scope="module")
def con():
    with duckdb.connect() as connection:
        yield connection


def found(con, text: str, pattern: str) -> bool:
    [(hit,)] = con.execute("SELECT regexp_matches(?, ?)", [text, pattern]).fetchall()
    return hit


def test_re2_literal_escapes_every_ascii_non_alphanumeric_and_keeps_non_ascii():
    assert re2_literal("a.b_c%d") == "a\\.b\\_c\\%d"
    assert re2_literal("C:\\x") == "C\\:\\\\x"
    assert re2_literal("İσ 1") == "İσ\\ 1"


def test_each_hostile_needle_matches_itself_and_not_its_regex_reading(con):
    for needle in HOSTILE:
        assert found(con, f"<<{needle}>>", prefilter_re2([needle])), needle
    assert not found(con, "abcd", prefilter_re2(["a.c*(d)+[e]?"]))
    assert not found(con, "12", prefilter_re2(["^$|\\d{2}"]))
    assert not found(con, "abc", prefilter_re2(["a_c"]))
    assert not found(con, "xay", prefilter_re2(["x\ty"]))


def test_a_pattern_over_budget_cuts_every_needle_to_one_width():
    needles = [f"acct-{i:08d}-secret-token-{i:04d}" for i in range(2000)]
    pattern = prefilter_re2(needles)
    assert len(pattern.encode()) <= RE2_BUDGET
    alternatives = set(pattern.split("|"))
    assert {len(a.replace("\\", "")) for a in alternatives} == {12}
    assert "acct\\-0000001" in alternatives


def test_small_sets_keep_whole_needles_sorted_and_distinct():
    assert prefilter_re2(["bc", "abc", "bc"]) == "abc|bc"


def test_an_empty_needle_lets_every_text_through(con):
    assert found(con, "anything", prefilter_re2(["", "zzz"]))


@settings(max_examples=150, deadline=None)
@given(text=st.text(min_size=0, max_size=40),
       needles=st.lists(st.text(min_size=1, max_size=8), min_size=1, max_size=6))
def test_the_prefilter_finds_every_text_that_contains_a_needle(con, text, needles):
    pattern = prefilter_re2(needles)
    if any(needle in text for needle in needles):
        assert found(con, text, pattern)
    else:  # whole needles fit the budget: the pattern is exact
        assert not found(con, text, pattern)


# --------------------------------------------------------------------------- through the engine


@pytest.fixture
def checker(store, tmp_path) -> Checker:
    return Checker(store, tmp_path)


def test_hostile_and_overlapping_needles_give_exact_verdicts(checker):
    checker.ingest(*[ep(f"r{i}", output=f"<<{text}>>") for i, text in enumerate(HOSTILE)],
                   ep("turkish", output="welcome to istanbul"),
                   ep("near", output="its abc1 100 ac a-c C:/temp/new xy (?j) σοφια"))
    result = checker.check(f"""
        - id: c
          expect: {{must_not_leak: {json.dumps(HOSTILE)}, must_mention: {json.dumps(HOSTILE)}}}
    """)
    leaked = {needle: sorted(run for run, v in verdicts(result, f"must_not_leak[{i + 1}]").items()
                             if not v[0])
              for i, needle in enumerate(HOSTILE)}
    mentioned = {needle: sorted(run for run, v in verdicts(result, f"must_mention[{i}]").items()
                                if v[0])
                 for i, needle in enumerate(HOSTILE)}
    expected = {needle: [f"r{i}"] for i, needle in enumerate(HOSTILE)}
    # "abc" holds "bc", and the near-miss run holds "abc1": overlapping needles all count
    expected["bc"] = ["near", "r7", "r8"]
    expected["abc"] = ["near", "r7"]
    # lower() on both sides: İ -> i, so "welcome to istanbul" holds İSTANBUL
    expected["İSTANBUL"] = ["r9", "turkish"]
    assert leaked == expected
    assert mentioned == expected
    assert verdicts(result, "must_not_leak[8]")["r7"] == (
        False, "yes", 'LEAKED "abc" — this run crossed a permission boundary')


def test_needles_past_the_budget_still_match_exactly(checker):
    """2,000 needles share 12-character prefixes with text that holds none of them in full."""
    needles = [f"acct-{i:08d}-secret-token-{i:04d}" for i in range(2000)]
    checker.ingest(ep("full", output=f"oops: {needles[1234].upper()} leaked"),
                   ep("prefix-only", output=f"{needles[1234][:20]} and {needles[5][:-1]}"),
                   ep("clean", output="nothing"))
    result = checker.check(f"""
        - id: c
          expect: {{must_not_leak: {json.dumps(needles)}}}
    """)
    leaks = result.verdicts.filter(~result.verdicts["passed"])
    assert leaks.select("assertion_id", "episode_id").rows() == [("must_not_leak[1235]", "full")]
    assert result.verdicts.height == 3 * 2002  # 2,001 leak needles and the undeclared-write check
