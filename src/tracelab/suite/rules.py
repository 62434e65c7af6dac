"""The registry of sequence rules: each rule of `sequence_valid` (docs/suites.md §4) declared once.

A `RuleKind` names everything a rule needs: its model class, its keys (which of
them are optional) and how they are read (the loader), the parameter rows it
compiles to and the query of `sql/engine/assertions/` that evaluates them (the
engine), and what the static sweep refuses (lint). Its tool matchers are its
fields that hold one (or a list of them), found by key. The `sequence_valid`
family, the loader, `compile` and `lint` read `RULES`; none of them lists the
rules again.

Adding a rule: its model class in `model.py`, one `RuleKind` here (with its
functions), its query in `sql/engine/assertions/` (or rows of a shared one), and
its row in docs/suites.md §4 (tests/test_docs.py demands it).
"""
from __future__ import annotations

import builtins
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from tracelab.documents import line_of, raw_of
from tracelab.suite._parse import STATUSES, Env, matcher_at, read_matchers, read_statuses, unknown_name
from tracelab.suite.model import (
    AfterRule,
    BeforeRule,
    BlocklistRule,
    Case,
    EventuallyRule,
    LatestBeforeRule,
    MaxCallsRule,
    NeverAfterRule,
    RequireRule,
    Rule,
    SequenceRule,
    ToolMatcher,
)
from tracelab.suite.registry import (
    BLOCKLIST,
    BLOCKLIST_QUERY,
    CALL_COUNT_QUERY,
    CALL_COUNTS,
    SEQUENCE_QUERY,
    SEQUENCES,
    Builder,
    Columns,
    Problem,
    Query,
)
from tracelab.suite.typed_fields import Ctx, Fields, check_str

R = TypeVar("R", bound=Rule)


def _no_problem(rule: Any) -> Iterator[Problem]:
    return iter(())


@dataclass(frozen=True)
class RuleKind(Generic[R]):
    """One rule `type` of docs/suites.md §4, declared once for every layer that handles it."""

    type: str
    model: builtins.type[R]  # `type` here would mean the field above
    keys: tuple[str, ...]
    """The keys a rule takes besides `type`."""
    read: Callable[[Fields, Env], R]
    """(fields, env) -> the rule; unknown keys are refused and required ones present already."""
    compile: Callable[[Builder, Case, int, R], None]
    """(builder, case, unit id of the rule, rule): add its parameter rows."""
    query: Query
    """The verdict query its rows feed (several rules and families may share one)."""
    tables: Mapping[str, Columns]
    """The parameter tables it writes, with their columns."""
    optional: tuple[str, ...] = ()
    """The keys it may leave out."""
    lint: Callable[[R], Iterator[Problem]] = field(default=_no_problem)
    """(rule) -> what the static sweep refuses (docs/suites.md §6)."""

    def matchers(self, rule: R) -> Iterator[tuple[str, ToolMatcher]]:
        """(key, matcher) for each tool matcher the rule holds, in key order."""
        for key in self.keys:
            value = getattr(rule, key)
            if isinstance(value, ToolMatcher):
                yield key, value
            elif isinstance(value, tuple):
                yield from ((f"{key}[{i}]", m) for i, m in enumerate(value)
                            if isinstance(m, ToolMatcher))


# --- call counts: require, max_calls -------------------------------------------------------


def _compile_require(b: Builder, case: Case, unit: int, rule: RequireRule) -> None:
    b.call_count(case, unit, rule.tool, 1, None, False)


def _compile_max_calls(b: Builder, case: Case, unit: int, rule: MaxCallsRule) -> None:
    b.call_count(case, unit, rule.tool, 0, rule.max, True)


# --- order rules: before, after, never_after, eventually -------------------------------------

ORDER_RULES: dict[str, Columns] = {
    "p_order_rules": {"unit_id": "int", "case_id": "str", "rule": "str", "m1": "int", "m2": "int",
                      "within": "int"},
}
_ORDER_QUERY = Query("sequence_valid", "p_order_rules")


def _order_rows(first: str, second: str | None
                ) -> Callable[[Builder, Case, int, Any], None]:
    """The compile of an order rule: m1 is its field `first`, m2 its field `second` (if any)."""
    def compile_order(b: Builder, case: Case, unit: int, rule: Any) -> None:
        b.add("p_order_rules", unit_id=unit, case_id=case.id, rule=rule.type,
              m1=b.matcher(case, getattr(rule, first)),
              m2=b.matcher(case, getattr(rule, second)) if second is not None else None,
              within=getattr(rule, "within", None))
    return compile_order


def _lint_within(rule: AfterRule | EventuallyRule) -> Iterator[Problem]:
    if rule.within < 1:
        yield "contradictory", f"within {rule.within} is below 1"


# --- sequence, blocklist ---------------------------------------------------------------------


def _compile_sequence(b: Builder, case: Case, unit: int, rule: SequenceRule) -> None:
    b.sequence(case, unit, rule.tools, "rule_strict" if rule.strict else "rule")


def _compile_blocklist(b: Builder, case: Case, unit: int, rule: BlocklistRule) -> None:
    b.add("p_blocklist", unit_id=unit, case_id=case.id, blocked=rule.pattern, exact=rule.exact)


# --- latest_before (docs/suites.md §9) -------------------------------------------------------

LATEST_BEFORE: dict[str, Columns] = {
    "p_latest_before": {"unit_id": "int", "case_id": "str", "m_then": "int", "m_latest": "int",
                        "statuses": "list", "required": "bool"},
}


def _read_latest_before(f: Fields, env: Env) -> LatestBeforeRule:
    status = read_statuses(f, "status", allow_empty=False)
    return LatestBeforeRule(type="latest_before", then=matcher_at(f, "then", env),
                            latest=matcher_at(f, "latest", env),
                            status=("ok",) if status is None else status,
                            required=f.boolean("required", False))


def _compile_latest_before(b: Builder, case: Case, unit: int, rule: LatestBeforeRule) -> None:
    b.add("p_latest_before", unit_id=unit, case_id=case.id, m_then=b.matcher(case, rule.then),
          m_latest=b.matcher(case, rule.latest), statuses=list(rule.status),
          required=rule.required)


def _lint_latest_before(rule: LatestBeforeRule) -> Iterator[Problem]:
    if not rule.required and set(STATUSES) <= set(rule.status):
        yield "ineffective", ("status lists every status and required is false: "
                              "no `then` call can break it")


# --- the registry ----------------------------------------------------------------------------

_DECLARED: tuple[RuleKind[Any], ...] = (
    RuleKind("require", RequireRule, ("tool",),
             lambda f, env: RequireRule(type="require", tool=matcher_at(f, "tool", env)),
             _compile_require, CALL_COUNT_QUERY, CALL_COUNTS),
    RuleKind("before", BeforeRule, ("first", "then"),
             lambda f, env: BeforeRule(type="before", first=matcher_at(f, "first", env),
                                       then=matcher_at(f, "then", env)),
             _order_rows("first", "then"), _ORDER_QUERY, ORDER_RULES),
    RuleKind("after", AfterRule, ("trigger", "then", "within"),
             lambda f, env: AfterRule(type="after", trigger=matcher_at(f, "trigger", env),
                                      then=matcher_at(f, "then", env),
                                      within=f.integer("within", 1)),
             _order_rows("trigger", "then"), _ORDER_QUERY, ORDER_RULES,
             optional=("within",), lint=_lint_within),
    RuleKind("never_after", NeverAfterRule, ("trigger", "forbidden"),
             lambda f, env: NeverAfterRule(type="never_after",
                                           trigger=matcher_at(f, "trigger", env),
                                           forbidden=matcher_at(f, "forbidden", env)),
             _order_rows("trigger", "forbidden"), _ORDER_QUERY, ORDER_RULES),
    RuleKind("eventually", EventuallyRule, ("tool", "within"),
             lambda f, env: EventuallyRule(type="eventually", tool=matcher_at(f, "tool", env),
                                           within=f.need_integer("within")),
             _order_rows("tool", None), _ORDER_QUERY, ORDER_RULES, lint=_lint_within),
    RuleKind("max_calls", MaxCallsRule, ("tool", "max"),
             lambda f, env: MaxCallsRule(type="max_calls", tool=matcher_at(f, "tool", env),
                                         max=f.need_integer("max", minimum=0)),
             _compile_max_calls, CALL_COUNT_QUERY, CALL_COUNTS),
    RuleKind("sequence", SequenceRule, ("tools", "strict"),
             lambda f, env: SequenceRule(type="sequence", tools=read_matchers(f, "tools", env),
                                         strict=f.boolean("strict", False)),
             _compile_sequence, SEQUENCE_QUERY, SEQUENCES, optional=("strict",)),
    RuleKind("blocklist", BlocklistRule, ("pattern",),
             lambda f, env: BlocklistRule(type="blocklist", pattern=f.need_string("pattern")),
             _compile_blocklist, BLOCKLIST_QUERY, BLOCKLIST),
    RuleKind("latest_before", LatestBeforeRule, ("then", "latest", "status", "required"),
             _read_latest_before, _compile_latest_before,
             Query("latest_before", "p_latest_before"), LATEST_BEFORE,
             optional=("status", "required"), lint=_lint_latest_before),
)
RULES: dict[str, RuleKind[Any]] = {kind.type: kind for kind in _DECLARED}
"""Every sequence rule of docs/suites.md §4, in the order of its table."""

RULE_KEYS: dict[str, tuple[str, ...]] = {kind: r.keys for kind, r in RULES.items()}
"""The keys each rule takes besides `type`."""


def read_rule(entry: Any, ctx: Ctx, line: int | None, env: Env) -> Rule:
    """One rule of `sequence_valid` (docs/suites.md §4)."""
    if not isinstance(entry, Mapping) or "type" not in entry:
        raise ctx.error("a rule must be a mapping with a `type` naming the rule", line)
    kind = check_str(entry["type"], ctx.at("type"), line_of(entry, "type"), raw_of(entry, "type"))
    if kind not in RULES:
        raise ctx.at("type").error(unknown_name("rule type", kind, RULES),
                                   line_of(entry, "type"))
    declared = RULES[kind]
    f = Fields(entry, ctx, ("type", *declared.keys), f"a {kind} rule", line)
    f.require(*(k for k in declared.keys if k not in declared.optional))
    return declared.read(f, env)


def rule_matchers(rule: Rule) -> Iterator[tuple[str, ToolMatcher]]:
    """(key, matcher) for each tool matcher of `rule`."""
    return RULES[rule.type].matchers(rule)


__all__ = ["ORDER_RULES", "RULES", "RULE_KEYS", "RuleKind", "read_rule", "rule_matchers"]
