"""The static sweep (docs/suites.md §6): assertions that cannot fail, or cannot pass, on any trace.

`lint_suite` reads only the loaded `Suite`; it never needs a store. `check`
refuses a suite with findings unless `--allow-ineffective` (the CLI's job).
Beyond §6's list it also reports, with the same kinds, more shapes that
cannot fail or cannot pass: `min_calls` above `max_calls` (contradictory), an
empty `termination` list (contradictory), `trace_max_steps` with `kinds: []`
and `sequence_valid` with `rules: []` and `retrieval_top` with `ids: []`
(ineffective), and a `latest_before` rule whose `status` lists every status
without `required` (ineffective). An `args_valid` schema whose only keys are
annotations (`title`, `description`, `$schema`, `format`, ...) counts as `{}`.
Each construct's own findings are declared with it (`families`, `expect`,
`rules`); this module walks the cases and checks every tool matcher alike.
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tracelab.suite.expect import lint_expect
from tracelab.suite.families import FAMILIES
from tracelab.suite.model import Assertion, Case, Suite, ToolMatcher
from tracelab.suite.registry import FindingKind

if TYPE_CHECKING:
    import polars as pl


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

    for assertion_id, (kind, reason) in lint_expect(case.expect):
        yield found(kind, assertion_id, reason)
    expect = case.expect
    called = {tool: i for i, tool in reversed(list(enumerate(expect.tools_called)))}
    for assertion in case.assertions:
        yield from (found(kind, assertion.id, reason)
                    for kind, reason in _assertion_findings(assertion, called))


def _assertion_findings(a: Assertion, called: dict[str, int]
                        ) -> Iterator[tuple[FindingKind, str]]:
    family = FAMILIES[a.type]
    for where, matcher in family.matchers(a):
        yield from _matcher_findings(where, matcher)
    yield from family.lint(a, called)


def _matcher_findings(where: str, matcher: ToolMatcher) -> Iterator[tuple[FindingKind, str]]:
    """An empty name or glob cannot match a call (docs/suites.md §8: in every branch of an any_of)."""
    if all(b.tool == "" or b.tool_glob == "" for b in matcher.branches):
        if matcher.any_of:
            yield "ineffective", f"every branch of any_of has an empty tool name ({where})"
        else:
            yield "ineffective", f"an empty tool name ({where})"
