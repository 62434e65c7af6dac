"""Failure location (docs/cli.md §6, docs/suites.md §5): the `step_idx`
of every failed result, per assertion family, on hand-written runs whose deciding step is known.

Every run starts with a user message (idx 0), so a step index is never a call index by chance;
`call()` adds a tool_call step and its tool_result step (two indexes).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest

from tests.suite.engine_support import Checker, call, ep
from tracelab.engine.evaluate import Carried
from tracelab.engine.verdicts import CheckResult, compact
from tracelab.suite.expect import EXPECT_QUERIES
from tracelab.suite.families import FAMILIES

HELLO = {"kind": "user", "text": "hello"}
SECRET = "s3cr3t-token"

Located = tuple[bool, int | None]


@pytest.fixture
def checker(store, tmp_path) -> Checker:
    return Checker(store, tmp_path)


def located(result: CheckResult, assertion_id: str, case_id: str | None = None
            ) -> dict[str, Located]:
    """episode_id -> (passed, step_idx) of one assertion; every pass anywhere has no step."""
    frame = result.verdicts
    assert frame.schema["step_idx"] == pl.Int32
    assert frame.filter(pl.col("passed") & pl.col("step_idx").is_not_null()).height == 0
    rows = frame.filter(pl.col("assertion_id") == assertion_id)
    if case_id is not None:
        rows = rows.filter(pl.col("case_id") == case_id)
    out = {r["episode_id"]: (r["passed"], r["step_idx"]) for r in rows.iter_rows(named=True)}
    assert len(out) == rows.height, "one row per run expected"
    return out


def run(episode_id: str, *steps: Any, **fields: Any) -> dict[str, Any]:
    """A run of case c whose steps follow a user message (idx 0); lists are flattened."""
    flat = [s for part in steps for s in (part if isinstance(part, list) else [part])]
    return ep(episode_id, HELLO, *flat, **fields)


def say(text: str) -> dict[str, Any]:
    return {"kind": "assistant", "text": text}


def one(checker: Checker, assertion: str, expect: str = "") -> CheckResult:
    """A case c with one typed assertion (id a) and optional `expect` keys."""
    head = f"  expect: {expect}\n" if expect else ""
    return checker.check(f"- id: c\n{head}  assertions:\n    - {assertion}\n")


COVERED: set[str] = set()
"""The families a test below locates; test_every_family_is_located holds it to the registry."""


def covers(*families: str):
    COVERED.update(families)
    return lambda test: test


# --- expect keys -----------------------------------------------------------------------------


@covers("must_not_leak")
def test_must_not_leak_is_at_the_first_fragment_holding_the_string(checker):
    checker.ingest(
        run("in-text", call("lookup"), say(f"it is {SECRET}"), say(SECRET)),        # 3
        run("in-args", say("ok"), call("send", {"body": {"token": SECRET.upper()}})),  # 2
        run("in-name", call(SECRET)),                                                # 1
        run("in-input", say(SECRET), input=f"use {SECRET}"),                        # input first
        run("in-output", say("done"), output=f"here: {SECRET}"),                    # output only
        run("clean", say("nothing"), output="fine"),
    )
    result = checker.check(f"- id: c\n  expect: {{must_not_leak: [{SECRET}]}}\n")
    assert located(result, "must_not_leak[1]") == {
        "in-text": (False, 3), "in-args": (False, 2), "in-name": (False, 1),
        "in-input": (False, None), "in-output": (False, None), "clean": (True, None),
    }
    # the location never carries the text: the reason names the string only
    reasons = result.verdicts.filter(pl.col("assertion_id") == "must_not_leak[1]")["reason"]
    assert all("it is" not in (r or "") and "here:" not in (r or "") for r in reasons)


@covers("must_not_write")
def test_must_not_write_is_at_the_write_that_ran(checker):
    tools = [{"name": "delete", "effect": "write"}, {"name": "read", "effect": "read"}]
    checker.ingest(
        run("wrote", call("read"), call("delete", status="denied"), call("delete"), call("delete"),
            tools=tools),                                             # denied at 3, ran at 5
        run("denied", call("delete", status="denied"), tools=tools),
    )
    result = checker.check("- id: c\n  expect: {must_not_write: [delete], writes_allowed: [delete]}\n")
    assert located(result, "must_not_write[0]") == {"wrote": (False, 5), "denied": (True, None)}


@covers("undeclared_writes")
def test_undeclared_writes_is_at_the_first_undeclared_write_that_ran(checker):
    tools = [{"name": "save", "effect": "write"}, {"name": "wipe", "effect": "write"}]
    checker.ingest(
        run("wiped", call("save"), call("wipe", status="error"), call("wipe"), tools=tools),  # 5
        run("saved", call("save"), tools=tools),
    )
    result = checker.check("- id: c\n  expect: {writes_allowed: [save]}\n")
    assert located(result, "undeclared_writes") == {"wiped": (False, 5), "saved": (True, None)}


@covers("max_steps")
def test_max_steps_is_at_the_first_budget_step_over_the_limit(checker):
    def budget(n: int) -> dict[str, Any]:
        return {"kind": "budget", "steps_used": n}

    checker.ingest(run("over", budget(3), say("x"), budget(7), budget(9)),   # 3
                   run("within", budget(5)))
    result = checker.check("- id: c\n  expect: {max_steps: 5}\n")
    assert located(result, "max_steps") == {"over": (False, 3), "within": (True, None)}


@covers("termination", "tools_called", "must_mention", "confirmations_raised", "writes")
def test_run_level_expect_failures_have_no_step(checker):
    checker.ingest(run("r", call("other"), say("hi"), termination="error"))
    result = checker.check("""\
        - id: c
          expect:
            termination: success
            tools_called: [needed]
            must_mention: [absent-words]
            confirmations_raised: [needed]
            writes: [needed]
        """)
    for assertion in ("termination", "tools_called[0]", "must_mention[0]",
                      "confirmations_raised[0]", "writes[0]"):
        assert located(result, assertion) == {"r": (False, None)}, assertion


# --- typed assertions ------------------------------------------------------------------------


@covers("trace_must_not_call_tool", "trace_must_call_tool")
def test_call_counts_are_at_the_first_call_beyond_the_limit(checker):
    checker.ingest(run("twice", call("rm"), call("ls"), call("rm")),   # rm at 1 and 5
                   run("never", call("ls")))
    result = checker.check("""\
        - id: c
          assertions:
            - {type: trace_must_not_call_tool, id: not, tool: rm}
            - {type: trace_must_call_tool, id: most1, tool: rm, min_calls: 0, max_calls: 1}
            - {type: trace_must_call_tool, id: least1, tool: rm}
        """)
    assert located(result, "not") == {"twice": (False, 1), "never": (True, None)}
    assert located(result, "most1") == {"twice": (False, 5), "never": (True, None)}
    # too few calls is an absence: the run as a whole
    assert located(result, "least1") == {"twice": (True, None), "never": (False, None)}


@covers("trace_tool_sequence")
def test_tool_sequence_exact_is_at_the_first_disagreeing_call(checker):
    checker.ingest(run("wrong", call("a"), call("c")),            # c at 3 disagrees
                   run("extra", call("a"), call("b"), call("z")),  # z at 5 is unexpected
                   run("short", call("a")),                        # no call where b should be
                   run("right", call("a"), call("b")))
    result = checker.check("""\
        - id: c
          assertions:
            - {type: trace_tool_sequence, id: exact, sequence: [a, b], allow_other_tools: false}
            - {type: trace_tool_sequence, id: sub, sequence: [a, b], allow_other_tools: true}
        """)
    assert located(result, "exact") == {"wrong": (False, 3), "extra": (False, 5),
                                        "short": (False, None), "right": (True, None)}
    # a missing item of a subsequence is an absence
    assert located(result, "sub") == {"wrong": (False, None), "extra": (True, None),
                                      "short": (False, None), "right": (True, None)}


@covers("trace_max_steps")
def test_trace_max_steps_is_at_the_first_step_beyond_the_limit(checker):
    checker.ingest(run("long", call("a"), call("b"), say("x")),   # steps 0..5
                   run("short"))
    result = checker.check("""\
        - id: c
          assertions:
            - {type: trace_max_steps, id: all, max: 2}
            - {type: trace_max_steps, id: calls, max: 1, kinds: [tool_call]}
        """)
    assert located(result, "all") == {"long": (False, 2), "short": (True, None)}
    assert located(result, "calls") == {"long": (False, 3), "short": (True, None)}


@covers("tool_blocklist")
def test_tool_blocklist_is_at_the_first_blocked_call(checker):
    checker.ingest(run("blocked", call("ls"), call("rm_rf"), call("rm")), run("clean", call("ls")))
    result = one(checker, "{type: tool_blocklist, id: a, blocked: [rm]}")
    assert located(result, "a") == {"blocked": (False, 3), "clean": (True, None)}


@covers("args_valid")
def test_args_valid_is_at_the_first_invalid_call(checker):
    checker.ingest(run("bad", call("f", {"x": 1}), call("f", {"x": "one"}), call("f", {})),  # 3
                   run("good", call("f", {"x": 2})))
    result = one(checker, "{type: args_valid, id: a, tool: f, schema: {type: object, "
                          "properties: {x: {type: integer}}}}")
    assert located(result, "a") == {"bad": (False, 3), "good": (True, None)}


@covers("tool_status")
def test_tool_status_is_at_the_first_call_with_a_disallowed_status(checker):
    checker.ingest(run("failed", call("a"), call("b", status="error"), call("c", status="denied")),
                   run("fine", call("a")))
    result = one(checker, "{type: tool_status, id: a, tool: '*'}")
    assert located(result, "a") == {"failed": (False, 3), "fine": (True, None)}


@covers("output_contains", "output_not_contains", "output_matches", "output_not_matches")
def test_output_failures_have_no_step(checker):
    checker.ingest(run("r", say("done"), output="the final answer"))
    result = checker.check("""\
        - id: c
          assertions:
            - {type: output_contains, id: has, value: missing}
            - {type: output_not_contains, id: hasnt, value: final}
            - {type: output_matches, id: m, pattern: '^x'}
            - {type: output_not_matches, id: nm, pattern: answer}
        """)
    for assertion in ("has", "hasnt", "m", "nm"):
        assert located(result, assertion) == {"r": (False, None)}, assertion


@covers("sequence_valid")
def test_sequence_rules_are_at_the_offending_call(checker):
    checker.ingest(
        run("reversed", call("get"), call("login")),                 # get at 1 comes first
        run("unanswered", call("pay"), call("audit"), call("pay")),  # the pay at 5
        run("forbidden", call("x"), call("lock"), call("send")),     # send at 5
        run("too-many", call("ping"), call("ping"), call("ping")),   # the third ping at 5
        run("blocked", call("x"), call("drop_table")),               # drop_table at 3
        run("absent", call("x")),
    )
    result = checker.check("""\
        - id: c
          assertions:
            - {type: sequence_valid, id: before, rules: [{type: before, first: login, then: get}]}
            - {type: sequence_valid, id: after, rules: [{type: after, trigger: pay, then: audit}]}
            - {type: sequence_valid, id: never, rules: [{type: never_after, trigger: lock, forbidden: send}]}
            - {type: sequence_valid, id: max, rules: [{type: max_calls, tool: ping, max: 2}]}
            - {type: sequence_valid, id: block, rules: [{type: blocklist, pattern: drop}]}
            - {type: sequence_valid, id: require, rules: [{type: require, tool: login}]}
            - {type: sequence_valid, id: eventually, rules: [{type: eventually, tool: login, within: 1}]}
            - {type: sequence_valid, id: seq, rules: [{type: sequence, tools: [pay, audit, ping]}]}
        """)
    failed_at = {assertion: {e: step for e, (passed, step) in located(result, assertion).items()
                             if not passed}
                 for assertion in ("before", "after", "never", "max", "block", "require",
                                   "eventually", "seq")}
    assert failed_at["before"] == {"reversed": 1}
    assert failed_at["after"] == {"unanswered": 5}
    assert failed_at["never"] == {"forbidden": 5}
    assert failed_at["max"] == {"too-many": 5}
    assert failed_at["block"] == {"blocked": 3}
    # require, eventually and sequence fail on an absence: the run as a whole
    assert set(failed_at["require"].values()) == {None} and "reversed" not in failed_at["require"]
    assert set(failed_at["eventually"].values()) == {None}
    assert failed_at["seq"] == {"unanswered": None, "too-many": None}


def test_a_sequence_valid_entry_is_at_its_earliest_failed_rule(checker):
    checker.ingest(run("both", call("x"), call("drop"), call("lock"), call("send")),  # 3 and 7
                   run("later-only", call("lock"), call("x"), call("send")),         # 5
                   run("vacuous", call("x")))
    result = one(checker, "{type: sequence_valid, id: a, rules: ["
                          "{type: never_after, trigger: lock, forbidden: send}, "
                          "{type: blocklist, pattern: drop}, {type: require, tool: x}]}")
    assert located(result, "a") == {"both": (False, 3), "later-only": (False, 5),
                                    "vacuous": (True, None)}


# --- retrieval -------------------------------------------------------------------------------


def retrieval(**data: Any) -> dict[str, Any]:
    return {"kind": "retrieval", "data": {"query": "q", **data}}


def items(*ids: Any, **superseded: Any) -> list[dict[str, Any]]:
    out = []
    for i in ids:
        item = {"id": i, "score": 0.5, "content": f"doc {i} " + "x" * 20}
        if str(i) in superseded:
            item["superseded_by"] = superseded[str(i)]
        out.append(item)
    return out


GOOD = retrieval(candidates=items(1, 2), returned=[1], omitted=1, budget_bytes=1000)


@pytest.mark.parametrize(("assertion", "bad"), [
    ("{type: retrieval_reports_omissions, id: a}",
     retrieval(candidates=items(1, 2), returned=[1], omitted=0)),
    ("{type: retrieval_excludes_superseded, id: a}",
     retrieval(candidates=items(1, 2, **{"2": 3}), returned=[1, 2], omitted=0)),
    ("{type: retrieval_top, id: a, ids: [1], k: 1}",
     retrieval(candidates=items(1, 2), returned=[2, 1], omitted=0)),
    ("{type: retrieval_excludes, id: a, content_contains: 'DOC 2'}",
     retrieval(candidates=items(1, 2), returned=[2], omitted=1)),
    ("{type: retrieval_within_budget, id: a}",
     retrieval(candidates=items(1, 2), returned=[1, 2], omitted=0, budget_bytes=10)),
])
def test_retrieval_is_at_the_first_failing_retrieval_step(checker, assertion, bad):
    checker.ingest(run("bad", GOOD, say("x"), bad, bad),   # the first bad step is 3
                   run("good", GOOD),
                   run("none", say("x")))
    result = one(checker, assertion)
    assert located(result, "a") == {"bad": (False, 3), "good": (True, None),
                                    "none": (True, None)}


COVERED.update(("retrieval_reports_omissions", "retrieval_excludes_superseded", "retrieval_top",
                "retrieval_excludes", "retrieval_within_budget"))


def test_every_family_is_located():
    """Each assertion type and expect key has a location test above (issue 13, acceptance 1)."""
    expected = set(FAMILIES) | {q.name for q in EXPECT_QUERIES}
    assert expected - COVERED == set()


def test_every_family_has_its_location_documented():
    """docs/suites.md §5 "Where a failure happened" names every assertion type and expect key."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "suites.md").read_text(encoding="utf-8")
    heading = "### Where a failure happened (`step_idx`)"
    assert heading in text
    table = text.split(heading, 1)[1].split("\n#", 1)[0]
    first_cells = " ".join(line.split(" | ")[0] for line in table.splitlines() if line.startswith("| `"))
    expected = set(FAMILIES) | {q.name for q in EXPECT_QUERIES}
    assert {kind for kind in expected if f"`{kind}`" not in first_cells} == set()


def test_an_incremental_check_keeps_the_carried_locations(checker):
    checker.ingest(run("old", call("rm")))
    suite = "- id: c\n  assertions:\n    - {type: tool_blocklist, id: a, blocked: [rm]}\n"
    first = checker.check(suite)
    assert located(first, "a") == {"old": (False, 1)}
    since = checker.store.con.execute(
        "SELECT ingested_at FROM episodes WHERE episode_id = 'old'").fetchone()[0]
    checker.ingest(run("new", call("ls"), call("rm")))
    later = checker.check(suite, since=since, carried=lambda: Carried(first.notable, first.selection))
    assert located(later, "a") == {"old": (False, 1), "new": (False, 3)}
    # rows saved before check_results had the column carry no location
    notable, selection, _ = compact(first.verdicts.drop("step_idx"))
    older = checker.check(suite, since=since, carried=lambda: Carried(notable, selection))
    assert located(older, "a") == {"old": (False, None), "new": (False, 3)}
