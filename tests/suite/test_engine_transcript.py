"""The transcript a check searches (trace-format §4): the fragments must_mention and
must_not_leak see are the `transcript` view's, read from the stored JSON text without
json_tree, and only those that can hold a needle are kept."""
from __future__ import annotations

import json

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.suite.engine_support import Checker, call, ep, verdicts
from tracelab.engine.evaluate import _scope, _transcript
from tracelab.sqlfiles import load_sql, run_script


@pytest.fixture
def checker(store, tmp_path) -> Checker:
    return Checker(store, tmp_path)


def test_data_leaves_keys_escapes_numbers_and_booleans_are_fragments(checker):
    documents = {
        "quoted": {"note": 'said "hi"'}, "path": {"note": "C:\\tmp"},
        "lines": {"note": "one\ntwo"}, "flags": {"flags": [True, False]},
        "amount": {"amount": 2.5}, "keyed": {"nested": {"deep key": None}},
        "listed": {"items": ["alpha", "beta"]},
    }
    checker.ingest(*(ep(name, *call("send", args)) for name, args in documents.items()))
    needles = ['said "hi"', "c:\\tmp", "one\ntwo", "false", "2.5", "deep key",
               "alpha,beta", "null", "0", 'note":']
    result = checker.check(f"""
        - id: c
          expect: {{must_mention: {json.dumps(needles)}}}
    """)
    found = {needle: sorted(run for run, (passed, _, _) in
                            verdicts(result, f"must_mention[{i}]").items() if passed)
             for i, needle in enumerate(needles)}
    assert found == {
        'said "hi"': ["quoted"],   # decoded from its escaped JSON text
        "c:\\tmp": ["path"],      # a backslash, decoded and lower-cased
        "one\ntwo": ["lines"],     # a newline inside one string
        "false": ["flags"],        # a boolean's JSON text
        "2.5": ["amount"],         # a number's JSON text
        "deep key": ["keyed"],     # an object key
        "alpha,beta": [],          # would span two fragments
        "null": [],                # null is no fragment
        "0": [],                   # array positions are not keys
        'note":': [],              # JSON syntax is not text
    }


# --- the check's fragments decide exactly as the view's ----------------------------------

# with characters DuckDB's lower() treats apart (İ, the Kelvin sign, Σ -> σ, never ς)
ALPHABET = 'ab"\\\n:,[]{}0.1eEİı tfrué-\u212aK\u03a3\u03c2'
texts = st.text(alphabet=ALPHABET, max_size=6)
documents = st.recursive(
    st.none() | st.booleans() | st.integers(-10**20, 10**20)
    | st.floats(allow_nan=False, allow_infinity=False) | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)
steps = st.tuples(st.none() | texts, st.none() | texts, st.none() | documents, st.booleans())
episodes = st.lists(st.tuples(st.none() | texts, st.lists(steps, max_size=3)), min_size=1,
                    max_size=3)


@settings(max_examples=100, deadline=None)
@given(episodes=episodes, needles=st.lists(st.text(alphabet=ALPHABET, min_size=1, max_size=3),
                                           min_size=1, max_size=2))
def test_needles_match_in_the_check_exactly_where_they_match_in_the_view(episodes, needles):
    with duckdb.connect() as con:
        con.execute(load_sql("store/schema/tables"))
        run_script(con, "store/views/rules")
        run_script(con, "store/views/transcript")
        for e, (output, episode_steps) in enumerate(episodes):
            con.execute("INSERT INTO episodes (episode_id, output, tools_declared, n_steps, "
                        "content_hash) VALUES (?, ?, false, ?, '')",
                        [f"e{e}", output, len(episode_steps)])
            for idx, (text, name, data, ascii_only) in enumerate(episode_steps):
                stored = None if data is None else json.dumps(
                    data, ensure_ascii=ascii_only, separators=(",", ":"))
                con.execute("INSERT INTO steps (episode_id, idx, kind, text, name, data) "
                            "VALUES (?, ?, 'event', ?, ?, ?)", [f"e{e}", idx, text, name, stored])
        con.execute("CREATE TEMP TABLE chk_runs AS SELECT episode_id FROM episodes")
        _scope(con)
        [(lowered,)] = con.execute(load_sql("engine/assertions/_lower"), {"texts": needles}).fetchall()
        _transcript(con, {"must_mention": lowered})
        for needle in lowered:
            in_view = con.execute("SELECT DISTINCT episode_id FROM transcript "
                                  "WHERE contains(lower(text), ?) ORDER BY 1", [needle]).fetchall()
            in_check = con.execute("SELECT DISTINCT episode_id FROM chk_transcript "
                                   "WHERE contains(ltext, ?) ORDER BY 1", [needle]).fetchall()
            assert in_check == in_view, needle
        [(foreign,)] = con.execute(
            "SELECT count(*) FROM chk_transcript c WHERE NOT EXISTS (SELECT 1 FROM transcript t "
            "WHERE t.episode_id = c.episode_id AND lower(t.text) = c.ltext)").fetchall()
        assert foreign == 0
