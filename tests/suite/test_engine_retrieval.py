"""The five retrieval_* assertions (suite.md §3, trace-format §5), checked per retrieval step."""
from __future__ import annotations

from typing import Any

import pytest

from tests.suite.engine_support import Checker, ep, verdicts

NO_STEP = (True, "no", "no retrieval step")


@pytest.fixture
def checker(store, tmp_path) -> Checker:
    return Checker(store, tmp_path)


def retrieval(**data: Any) -> dict[str, Any]:
    return {"kind": "retrieval", "data": {"query": "q", **data}}


def items(*ids: Any, **superseded: Any) -> list[dict[str, Any]]:
    """Candidates with content `doc <id>`; superseded maps str(id) to superseded_by."""
    out = []
    for i in ids:
        item = {"id": i, "score": 0.5, "content": f"doc {i}"}
        if str(i) in superseded:
            item["superseded_by"] = superseded[str(i)]
        out.append(item)
    return out


def test_retrieval_reports_omissions(checker):
    checker.ingest(
        ep("complete", retrieval(candidates=items(1, 2, 3), returned=[1, 2], omitted=1)),
        ep("wrong-count", retrieval(candidates=items(1, 2, 3), returned=[1], omitted=1)),
        ep("missing", retrieval(candidates=items(1), returned=[1])),
        ep("not-integer", retrieval(candidates=items(1, 2), returned=[1], omitted=1.5)),
        ep("as-text", retrieval(candidates=items(1, 2), returned=[1], omitted="1")),
        ep("empty-lists", retrieval(omitted=0)),
        ep("second-step", retrieval(candidates=items(1), returned=[1], omitted=0), retrieval(
            candidates=items(1, 2), returned=[], omitted=1)),
        ep("no-step"),
    )
    result = checker.check("""
        - id: c
          assertions: [{type: retrieval_reports_omissions, id: r}]
    """)
    assert verdicts(result, "r") == {
        "complete": (True, "yes", None),
        "wrong-count": (False, "yes", "1 returned + 1 omitted != 3 candidates (retrieval step 0)"),
        "missing": (False, "yes", "omitted is missing (retrieval step 0)"),
        "not-integer": (False, "yes", "omitted is not an integer (retrieval step 0)"),
        "as-text": (False, "yes", "omitted is not an integer (retrieval step 0)"),
        "empty-lists": (True, "yes", None),
        "second-step": (False, "yes", "0 returned + 1 omitted != 2 candidates (retrieval step 1)"),
        "no-step": NO_STEP,
    }


def test_retrieval_excludes_superseded_follows_chains_and_cycles(checker):
    checker.ingest(
        ep("fresh", retrieval(candidates=items(1, 2, **{"2": 3}), returned=[1])),
        ep("stale", retrieval(candidates=items(1, 2, **{"2": 3}), returned=[1, 2])),
        ep("empty-string", retrieval(candidates=items("a", **{"a": ""}), returned=["a"])),
        ep("null-is-fresh", retrieval(candidates=items("a", **{"a": None}), returned=["a"])),
        ep("cycle", retrieval(candidates=items("a", "b", "c", "d", a="b", b="c", c="a"),
                              returned=["d"])),
        ep("self-loop", retrieval(candidates=items("x", "y", x="x"), returned=["y"])),
        ep("chain-leaves", retrieval(candidates=items("a", "b", "c", a="b", b="z"),
                                     returned=["c"])),
        ep("unknown-id", retrieval(candidates=items(1), returned=[9])),
        ep("no-step"),
    )
    result = checker.check("""
        - id: c
          assertions: [{type: retrieval_excludes_superseded, id: r}]
    """)
    assert verdicts(result, "r") == {
        "fresh": (True, "yes", None),
        "stale": (False, "yes", "retrieval step 0 returned superseded id 2 (superseded_by 3)"),
        "empty-string": (False, "yes",
                         'retrieval step 0 returned superseded id "a" (superseded_by "")'),
        "null-is-fresh": (True, "yes", None),
        "cycle": (False, "yes",
                  'retrieval step 0: superseded_by chains form a cycle through id "a"'),
        "self-loop": (False, "yes",
                      'retrieval step 0: superseded_by chains form a cycle through id "x"'),
        "chain-leaves": (True, "yes", None),
        "unknown-id": (True, "yes", None),
        "no-step": NO_STEP,
    }


def test_retrieval_top_compares_ids_as_json_values(checker):
    checker.ingest(
        ep("top", retrieval(candidates=items("a", "b", "c"), returned=["a", "b", "c"])),
        ep("third", retrieval(candidates=items("a", "b", "c"), returned=["a", "c", "b"])),
        ep("every-step", retrieval(returned=["b", "a"]), retrieval(returned=["a"])),
        ep("numbers", retrieval(returned=[1, "2"])),
        ep("no-step"),
    )
    result = checker.check("""
        - id: c
          assertions:
            - {type: retrieval_top, id: ab, ids: [a, b]}
            - {type: retrieval_top, id: one, ids: [1], k: 3}
            - {type: retrieval_top, id: two, ids: [2], k: 3}
    """)
    assert verdicts(result, "ab") == {
        "top": (True, "yes", None),
        "third": (False, "yes", 'retrieval step 0: id "b" is not among the first 2 returned'),
        "every-step": (False, "yes", 'retrieval step 1: id "b" is not among the first 2 returned'),
        "numbers": (False, "yes", 'retrieval step 0: id "a" is not among the first 2 returned'),
        "no-step": NO_STEP,
    }
    assert verdicts(result, "one")["numbers"] == (True, "yes", None)
    assert verdicts(result, "two")["numbers"] == (
        False, "yes", "retrieval step 0: id 2 is not among the first 3 returned")


def test_retrieval_excludes_searches_returned_content_case_insensitively(checker):
    secret = [{"id": 1, "content": "The SECRET plan"}, {"id": 2, "content": "public"}]
    checker.ingest(
        ep("leaky", retrieval(candidates=secret, returned=[2, 1])),
        ep("candidate-only", retrieval(candidates=secret, returned=[2])),
        ep("no-step"),
    )
    result = checker.check("""
        - id: c
          assertions: [{type: retrieval_excludes, id: r, content_contains: secret}]
    """)
    assert verdicts(result, "r") == {
        "leaky": (False, "yes", 'retrieval step 0 returned id 1, whose content contains "secret"'),
        "candidate-only": (True, "yes", None),
        "no-step": NO_STEP,
    }


def test_retrieval_within_budget_counts_utf8_bytes_of_every_occurrence(checker):
    emoji = [{"id": 1, "content": "👍🏽"}]  # 2 characters, 8 bytes
    four = [{"id": 1, "content": "abcd"}]
    checker.ingest(
        ep("within", retrieval(candidates=emoji, returned=[1], budget_bytes=8)),
        ep("over", retrieval(candidates=emoji, returned=[1], budget_bytes=7)),
        ep("repeated", retrieval(candidates=four, returned=[1, 1], budget_bytes=7)),
        ep("no-content", retrieval(candidates=four, returned=[5], budget_bytes=0)),
        ep("no-budget", retrieval(candidates=four, returned=[1])),
        ep("no-step"),
    )
    result = checker.check("""
        - id: c
          assertions: [{type: retrieval_within_budget, id: r}]
    """)
    no_budget = (True, "no", "no retrieval step with budget_bytes")
    assert verdicts(result, "r") == {
        "within": (True, "yes", None),
        "over": (False, "yes", "retrieval step 0 returned 8 bytes, budget_bytes 7"),
        "repeated": (False, "yes", "retrieval step 0 returned 8 bytes, budget_bytes 7"),
        "no-content": (True, "yes", None),
        "no-budget": no_budget,
        "no-step": no_budget,
    }
