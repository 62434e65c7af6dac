"""The static sweep (suite.md §6): assertions that cannot fail, or cannot pass, on any trace.

`lint_suite` reads only the loaded `Suite`; it never needs a store. `check`
refuses a suite with findings unless `--allow-ineffective` (the CLI's job).
Beyond §6's list it also reports, with the same kinds, four more shapes that
cannot fail or cannot pass: `min_calls` above `max_calls` (contradictory), an
empty `termination` list (contradictory), `trace_max_steps` with `kinds: []`
and `sequence_valid` with `rules: []` and `retrieval_top` with `ids: []`
(ineffective). An `args_valid` schema whose only keys are annotations
(`title`, `description`, `$schema`, `format`, ...) counts as `{}`.
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from tracelab.suite.model import (
    AfterRule,
    ArgsValid,
    Assertion,
    BeforeRule,
    Case,
    EventuallyRule,
    MaxCallsRule,
    MaxSteps,
    MustCallTool,
    MustNotCallTool,
    NeverAfterRule,
    RequireRule,
    Retrieval,
    Rule,
    SequenceRule,
    SequenceValid,
    Suite,
    ToolBlocklist,
    ToolMatcher,
    ToolSequence,
    ToolStatus,
)

if TYPE_CHECKING:
    import polars as pl

FindingKind = Literal["ineffective", "contradictory"]

_TOOL_LISTS = ("tools_called", "confirmations_raised", "writes", "writes_allowed",
               "must_not_write")
_ANNOTATIONS = frozenset({"$schema", "$id", "$comment", "title", "description", "examples",
                          "default", "deprecated", "readOnly", "writeOnly", "format", "$defs",
                          "definitions"})


@dataclass(frozen=True)
class Finding:
    """One refused assertion: what is wrong with it, in which case."""

    kind: FindingKind
    """'ineffective' (cannot fail on any trace) or 'contradictory' (cannot pass)."""
    case: str
    assertion: str
    """The result id: an assertion id, or `<key>[<i>]` of `expect`."""
    reason: str


def lint_suite(suite: Suite) -> list[Finding]:
    """Every ineffective or contradictory assertion of `suite`, in case and file order."""
    return [finding for case in suite.cases for finding in _case_findings(case)]


def lint_findings_frame(findings: Sequence[Finding]) -> pl.DataFrame:
    """The findings as a Polars DataFrame: kind, case_id, assertion_id, reason."""
    import polars as pl

    return pl.DataFrame(
        {
            "kind": [f.kind for f in findings],
            "case_id": [f.case for f in findings],
            "assertion_id": [f.assertion for f in findings],
            "reason": [f.reason for f in findings],
        },
        schema={"kind": pl.String, "case_id": pl.String, "assertion_id": pl.String,
                "reason": pl.String},
    )


def _case_findings(case: Case) -> Iterator[Finding]:
    def found(kind: FindingKind, assertion: str, reason: str) -> Finding:
        return Finding(kind, case.id, assertion, reason)

    expect = case.expect
    if expect.termination == ():
        yield found("contradictory", "termination", "an empty termination list matches no run")
    for key in _TOOL_LISTS:
        for index, tool in enumerate(getattr(expect, key)):
            if tool == "":
                yield found("ineffective", f"{key}[{index}]", "an empty tool name")
    for index, needle in enumerate(expect.must_mention):
        if needle == "":
            yield found("ineffective", f"must_mention[{index}]",
                        "an empty string is mentioned by every run")
    for index, needle in enumerate(expect.must_not_leak):
        if needle == "":
            yield found("contradictory", f"must_not_leak[{index}]",
                        "an empty string occurs in every transcript, so every run leaks it")
    writes = {tool: i for i, tool in reversed(list(enumerate(expect.writes)))}
    for index, tool in enumerate(expect.must_not_write):
        if tool in writes:
            yield found("contradictory", f"must_not_write[{index}]",
                        f"{tool!r} is also in writes[{writes[tool]}]: it must and must not write")
    called = {tool: i for i, tool in reversed(list(enumerate(expect.tools_called)))}
    for assertion in case.assertions:
        yield from (found(kind, assertion.id, reason)
                    for kind, reason in _assertion_findings(assertion, called))


def _assertion_findings(a: Assertion, called: dict[str, int]
                        ) -> Iterator[tuple[FindingKind, str]]:
    for where, matcher in _matchers(a):
        if matcher.tool == "":
            yield "ineffective", f"an empty tool name ({where})"
    if isinstance(a, (ArgsValid, ToolStatus)) and a.tool == "":
        yield "ineffective", "an empty tool name"
    if isinstance(a, MustCallTool):
        if a.min_calls == 0 and a.max_calls is None:
            yield "ineffective", "min_calls 0 with no max_calls holds for every run"
        if a.max_calls is not None and a.min_calls > a.max_calls:
            yield "contradictory", f"min_calls {a.min_calls} is above max_calls {a.max_calls}"
    elif isinstance(a, MustNotCallTool):
        if a.matcher.plain and a.matcher.tool in called:
            yield "contradictory", (f"{a.matcher.tool!r} is also in tools_called"
                                    f"[{called[a.matcher.tool]}]: it must and must not be called")
    elif isinstance(a, ToolSequence):
        if not a.sequence and a.allow_other_tools:
            yield "ineffective", "sequence: [] with allow_other_tools: true holds for every run"
    elif isinstance(a, ToolBlocklist):
        if not a.blocked:
            yield "ineffective", "an empty blocked list blocks nothing"
    elif isinstance(a, ArgsValid):
        if a.schema is True or (isinstance(a.schema, dict) and set(a.schema) <= _ANNOTATIONS):
            yield "ineffective", "the schema accepts every value ({} or true)"
    elif isinstance(a, MaxSteps):
        if a.kinds == ():
            yield "ineffective", "kinds: [] counts no step"
    elif isinstance(a, Retrieval):
        if a.type == "retrieval_top" and not a.ids:
            yield "ineffective", "ids: [] requires nothing"
    elif isinstance(a, SequenceValid):
        if not a.rules:
            yield "ineffective", "rules: [] holds for every run"
        for index, rule in enumerate(a.rules):
            within = getattr(rule, "within", None)
            if isinstance(rule, (AfterRule, EventuallyRule)) and within < 1:
                yield "contradictory", f"rules[{index}] ({rule.type}): within {within} is below 1"


def _matchers(a: Assertion) -> Iterator[tuple[str, ToolMatcher]]:
    """(where, matcher) for every tool matcher of an assertion."""
    if isinstance(a, (MustCallTool, MustNotCallTool)):
        yield "tool", a.matcher
    elif isinstance(a, ToolSequence):
        for index, matcher in enumerate(a.sequence):
            yield f"sequence[{index}]", matcher
    elif isinstance(a, SequenceValid):
        for index, rule in enumerate(a.rules):
            for key, matcher in _rule_matchers(rule):
                yield f"rules[{index}].{key}", matcher


def _rule_matchers(rule: Rule) -> Iterator[tuple[str, ToolMatcher]]:
    if isinstance(rule, (RequireRule, EventuallyRule, MaxCallsRule)):
        yield "tool", rule.tool
    elif isinstance(rule, BeforeRule):
        yield from (("first", rule.first), ("then", rule.then))
    elif isinstance(rule, AfterRule):
        yield from (("trigger", rule.trigger), ("then", rule.then))
    elif isinstance(rule, NeverAfterRule):
        yield from (("trigger", rule.trigger), ("forbidden", rule.forbidden))
    elif isinstance(rule, SequenceRule):
        for index, matcher in enumerate(rule.tools):
            yield f"tools[{index}]", matcher
