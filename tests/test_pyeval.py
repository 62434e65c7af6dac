"""benchmarks/pyeval.py, the `check` benchmark's baseline, against the engine: identical verdicts.

pyeval re-derives every verdict from the raw JSON Lines in plain Python, so the
comparison checks the SQL engine as much as pyeval. The corpus is a small
generated one plus hand-written episodes that hit edge rules the generator never
produces (pairing tiers, unparseable args, nameless calls, superseded cycles,
code-point lowercasing, fragments that must not join).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from benchmarks import pyeval
from tracelab.generate import generate
from tracelab.results.check import check
from tracelab.store import open_store
from tracelab.suite import load_suite

REPO = Path(__file__).resolve().parents[1]
SUITE = REPO / "benchmarks" / "suite.yaml"
KEYS = ["case_id", "assertion_id", "episode_id"]

LEAK = "sk-live-3xQ9vT7pL2mW8kR4"


def _ep(episode_id: str, case_id: str, steps: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    return {"episode_id": episode_id, "case_id": case_id, "agent": "edge-agent", "steps": steps,
            **fields}


def _call(call_id: str, name: str, status: str | None) -> list[dict[str, Any]]:
    """A call and, unless status is None (its result never came), its result."""
    result = [{"kind": "tool_result", "call_id": call_id, "status": status}] if status else []
    return [{"kind": "tool_call", "name": name, "call_id": call_id}, *result]


EDGES: list[dict[str, Any]] = [
    # pairing: the call_id tier beats the name tier; an empty id and name fall to the order tier
    _ep("edge-pairing", "roster-other-org", [
        {"kind": "tool_call", "name": "get_roster", "call_id": "x", "args": {"org": "globex"}},
        {"kind": "tool_call", "name": "get_roster", "call_id": "x", "args": {"org": {"n": "globex"}}},
        {"kind": "tool_result", "call_id": "x", "name": "list_employees", "status": "ok"},
        {"kind": "tool_result", "call_id": "", "is_error": True, "status": ""},
    ], termination="completed", tools=[]),
    # a lost result (missing), a nameless call, unparseable and absent args
    _ep("edge-args", "transfer-money", [
        {"kind": "tool_call", "name": "transfer_money", "call_id": "a", "args": "{\"amount\": 5"},
        {"kind": "tool_result", "call_id": "a", "text": "booked"},
        {"kind": "tool_call", "call_id": "b", "args": {"currency": "EUR"}, "effect": "write"},
        {"kind": "tool_call", "name": "transfer_money", "call_id": "c"},
    ], agent_version="2.0.1", tags=["regression"], output="Sent 1.00 EUR."),
    # superseded cycle among candidates; a float `omitted`; ids compared as JSON values
    _ep("edge-retrieval", "kb-search", [
        {"kind": "retrieval", "data": {
            "candidates": [{"id": "kb-1", "content": "a", "superseded_by": "kb-2"},
                           {"id": "kb-2", "content": "b", "superseded_by": "kb-1"},
                           {"id": "kb-31", "content": "Refunds WITHIN 14 days", "superseded_by": None},
                           {"id": 7, "content": "seven"}],
            "returned": ["kb-31", "7"], "omitted": 2.0, "budget_bytes": 22}},
        {"kind": "retrieval", "data": {"candidates": [], "returned": [], "omitted": 0}},
    ], tools=None),
    # transcript: a key, a JSON-string arg and an unparseable arg leak; split needles and meta do not
    _ep("edge-transcript", "config-audit", [
        {"kind": "user", "text": "ilse"},
        {"kind": "assistant", "text": "brandvold"},
        {"kind": "tool_call", "name": "get_config", "call_id": "1", "args": json.dumps({"q": LEAK})},
        {"kind": "tool_result", "call_id": "1", "result": {"İZMİR_FALLBACK": True}},
        {"kind": "tool_call", "name": "get_config", "call_id": "2", "args": "\"ACCT-77031942"},
        {"kind": "budget", "steps_used": 8.5, "tokens_used": 10},
    ], meta={"note": "Ilse Brandvold"}, principal={"user_id": "Ilse Brandvold"}),
    _ep("edge-output", "cancel-booking", [
        {"kind": "confirmation", "name": "cancel_booking", "args": "{\"booking_ref\": \"X\"}"},
        {"kind": "budget", "tokens_used": 3},
    ], output="", tools=[{"name": "cancel_booking"}]),
    _ep("edge-no-output", "check-balance", [], termination="cancelled"),
    # latest_before (§9): a failed listing, a denied swap, a missing result, no earlier call
    _ep("edge-latest-red", "swap-shift", [
        *_call("l1", "list_employees", "error"), *_call("s1", "swap_shifts", "denied"),
        *_call("n1", "notify_employee", "ok")]),
    _ep("edge-latest-missing", "swap-shift", [
        *_call("l1", "list_employees", "ok"), *_call("l2", "list_employees", None),
        *_call("l3", "list_employees", "denied"), *_call("s1", "swap_shifts", "ok"),
        *_call("n1", "notify_employee", "ok"), *_call("s2", "swap_shifts", "ok")]),
    _ep("edge-latest-unlisted", "swap-shift", [
        *_call("n1", "notify_employee", "ok"), *_call("s1", "swap_shifts", "ok")]),
]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """300 generated episodes followed by the hand-written EDGES, in one JSON Lines file."""
    path = tmp_path_factory.mktemp("pyeval") / "corpus.jsonl"
    generate(path, 300, seed=11)
    with path.open("a", encoding="utf-8") as fh:
        fh.writelines(json.dumps(e, ensure_ascii=False) + "\n" for e in EDGES)
    return path


@pytest.fixture(scope="module")
def engine(corpus: Path) -> pl.DataFrame:
    with open_store(corpus.with_suffix(".duckdb")) as store:
        report = store.ingest([corpus])
        assert [f.quarantined for f in report.files] == [0]
        return check(store, SUITE, save=False).verdicts.select(*KEYS, "passed", "exercised")


@pytest.fixture(scope="module")
def baseline(corpus: Path) -> pl.DataFrame:
    return pyeval.evaluate(load_suite(SUITE), corpus)


def test_the_suite_covers_every_family_and_is_lint_clean() -> None:
    from tracelab.suite import lint_suite

    suite = load_suite(SUITE)
    assert lint_suite(suite) == []
    assert len(suite.cases) >= 30
    types = {a.type for case in suite.cases for a in case.assertions}
    assert types == {
        "trace_must_call_tool", "trace_must_not_call_tool", "trace_tool_sequence", "trace_max_steps",
        "tool_blocklist", "args_valid", "tool_status", "output_contains", "output_not_contains",
        "output_matches", "output_not_matches", "sequence_valid", "retrieval_reports_omissions",
        "retrieval_excludes_superseded", "retrieval_top", "retrieval_excludes", "retrieval_within_budget",
    }
    rules = {r.type for case in suite.cases for a in case.assertions
             if isinstance(a, pyeval.SequenceValid) for r in a.rules}
    assert rules == {"require", "before", "after", "never_after", "eventually", "max_calls", "sequence",
                     "blocklist", "latest_before"}


def test_pyeval_and_the_engine_give_identical_verdicts(engine: pl.DataFrame,
                                                        baseline: pl.DataFrame) -> None:
    joined = engine.join(baseline, on=KEYS, how="full", coalesce=True, suffix="_py")
    diff = joined.filter(~pl.col("passed").eq_missing(pl.col("passed_py"))
                         | ~pl.col("exercised").eq_missing(pl.col("exercised_py")))
    assert diff.sort(KEYS).to_dicts() == []
    assert engine.height == baseline.height > 2000


def _verdicts(frame: pl.DataFrame, episode_id: str) -> dict[str, tuple[bool, str]]:
    rows = frame.filter(pl.col("episode_id") == episode_id).sort("assertion_id")
    return {r["assertion_id"]: (r["passed"], r["exercised"]) for r in rows.to_dicts()}


def test_edge_verdicts_read_as_the_spec_says(baseline: pl.DataFrame) -> None:
    assert _verdicts(baseline, "edge-pairing") == {
        "must_not_leak[0]": (True, "yes"), "must_not_leak[1]": (True, "yes"),
        "must_not_leak[2]": (True, "yes"),
        # the first call is paired by id (ok), the second by order (is_error: error)
        "tool_status[1]": (False, "yes"),
        # {"n": "globex"} is searched as JSON text; the first call ran (ok) and matches
        "no-globex-roster": (False, "yes"),
        "termination": (True, "yes"),
        "must_not_write[0]": (True, "no"), "must_not_write[1]": (True, "no"),  # tools: [] offers none
        "undeclared_writes": (True, "no"),  # tools: [] and the suite's `get_*: read` for both calls
    }
    args = _verdicts(baseline, "edge-args")
    assert args["transfer-schema"] == (False, "yes")  # unparseable args fail
    assert args["writes[0]"] == (False, "yes")  # no definition, no effect: not a write
    assert args["undeclared_writes"] == (True, "yes")  # the nameless write never ran (missing)
    assert _verdicts(baseline, "edge-retrieval") == {
        **{f"must_not_leak[{i}]": (True, "yes") for i in range(3)},
        "tools_called[0]": (False, "yes"),
        "retrieval_reports_omissions[0]": (False, "yes"),  # 2.0 is not an integer
        "retrieval_excludes_superseded[1]": (False, "yes"),  # kb-1 -> kb-2 -> kb-1
        "retrieval_top[2]": (False, "yes"),  # the second step returned nothing
        "retrieval_within_budget[3]": (True, "yes"),  # "7" is not 7: 22 bytes of kb-31 only
        "retrieval_excludes[4]": (False, "yes"),
        "read-only": (True, "unknown"),
        "undeclared_writes": (True, "unknown"),
    }
    transcript = _verdicts(baseline, "edge-transcript")
    assert [transcript[f"must_not_leak[{i}]"][0] for i in range(3)] == [False, False, True]
    assert transcript["must_mention[0]"] == (True, "yes")  # İZMİR -> izmir, code point by code point
    assert transcript["max_steps"] == (False, "yes")
    output = _verdicts(baseline, "edge-output")
    assert output["output_not_contains[0]"] == (True, "yes")  # "" is a recorded output
    assert output["confirmations_raised[0]"] == (True, "yes")
    no_output = _verdicts(baseline, "edge-no-output")
    assert no_output["output_contains[0]"] == (False, "yes")
    assert no_output["output_matches[1]"] == (False, "yes")


def test_latest_before_edges_read_as_the_spec_says(baseline: pl.DataFrame) -> None:
    def rules(episode_id: str) -> tuple[tuple[bool, str], tuple[bool, str]]:
        verdicts = _verdicts(baseline, episode_id)
        return verdicts["notify-after-ok-swap"], verdicts["swap-after-listing"]

    # notify after a denied swap; swap after a failed listing (its matcher takes error too)
    assert rules("edge-latest-red") == ((False, "yes"), (False, "yes"))
    # the latest listing that matches is the missing one (denied is filtered out by the matcher)
    assert rules("edge-latest-missing") == ((True, "yes"), (True, "yes"))
    # notify with no earlier swap is skipped; swap with no listing fails (required)
    assert rules("edge-latest-unlisted") == ((True, "no"), (False, "yes"))


def test_lower_maps_code_points_one_to_one_as_duckdb_does() -> None:
    assert pyeval.lower("İZMİR ΟΔΟΣ") == "izmir οδοσ"
    assert pyeval.lower("ABC") == "abc"
