"""Compile a suite into parameter tables for the set-based assertion queries.

Every result a case can produce becomes a *unit* (an `expect` item, a typed
assertion, or one rule of a `sequence_valid` entry) with an integer id. Each
assertion family gets one parameter table (`p_<family>`), one row per unit (or
per unit and value); the queries in `sql/assertions/` join those tables with
the selected runs, so one query per family covers every case and every run.
Suite text is data in these tables: it reaches DuckDB only as bound values.
The one exception is `select.where`, SQL by design, validated at load.
"""
from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from tracelab.suite.globs import glob_to_re2, is_glob, literal_re2
from tracelab.suite.model import (
    AfterRule,
    ArgsValid,
    Assertion,
    BeforeRule,
    BlocklistRule,
    Case,
    EventuallyRule,
    MaxCallsRule,
    MaxSteps,
    MustCallTool,
    MustNotCallTool,
    NeverAfterRule,
    OutputContains,
    OutputMatches,
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

_S, _I, _B = pl.Utf8, pl.Int64, pl.Boolean
_L = pl.List(pl.Utf8)

SCHEMAS: dict[str, dict[str, pl.DataType]] = {
    # every result unit; rules carry the unit of their sequence_valid entry as parent
    "p_units": {"unit_id": _I, "case_id": _S, "assertion_id": _S, "assertion_type": _S,
                "parent_id": _I, "label": _S},
    "p_select": {"case_id": _S, "has_select": _B, "case_id_re": _S, "agent_re": _S,
                 "agent_version_re": _S, "model_re": _S, "tags": _L, "where_idx": _I,
                 "input": _S},
    "p_tools": {"pos": _I, "regex": _S, "is_glob": _B, "effect": _S},
    "p_matchers": {"matcher_id": _I, "case_id": _S, "tool": _S, "statuses": _L, "label": _S},
    "p_matcher_args": {"matcher_id": _I, "key_ptr": _S, "path_ptr": _S, "parent_ptrs": _L,
                       "pattern": _S},
    "p_termination": {"unit_id": _I, "case_id": _S, "allowed": _L},
    "p_tools_called": {"unit_id": _I, "case_id": _S, "tool": _S},
    "p_must_mention": {"unit_id": _I, "case_id": _S, "needle": _S},
    "p_must_not_leak": {"unit_id": _I, "case_id": _S, "needle": _S},
    "p_confirmations_raised": {"unit_id": _I, "case_id": _S, "tool": _S},
    "p_writes": {"unit_id": _I, "case_id": _S, "tool": _S},
    "p_must_not_write": {"unit_id": _I, "case_id": _S, "tool": _S},
    "p_max_steps": {"unit_id": _I, "case_id": _S, "max": _I},
    "p_undeclared_writes": {"unit_id": _I, "case_id": _S},
    "p_writes_allowed": {"case_id": _S, "regex": _S},
    "p_call_counts": {"unit_id": _I, "case_id": _S, "matcher_id": _I, "min_calls": _I,
                      "max_calls": _I, "by_availability": _B, "expectation": _S},
    "p_sequences": {"unit_id": _I, "case_id": _S, "mode": _S, "n_items": _I},
    "p_sequence_items": {"unit_id": _I, "pos": _I, "matcher_id": _I},
    "p_trace_max_steps": {"unit_id": _I, "case_id": _S, "max": _I, "kinds": _L},
    "p_blocklist": {"unit_id": _I, "case_id": _S, "blocked": _S, "exact": _B},
    "p_args_valid": {"unit_id": _I, "case_id": _S, "tool": _S, "from_definitions": _B},
    "p_tool_status": {"unit_id": _I, "case_id": _S, "regex": _S, "allow": _L, "label": _S},
    "p_output_contains": {"unit_id": _I, "case_id": _S, "value": _S, "ignore_case": _B,
                          "negate": _B},
    "p_output_matches": {"unit_id": _I, "case_id": _S, "pattern": _S, "negate": _B},
    "p_retrieval": {"unit_id": _I, "case_id": _S, "type": _S, "k": _I, "needle": _S},
    "p_retrieval_ids": {"unit_id": _I, "id_key": _S, "id_label": _S},
    "p_order_rules": {"unit_id": _I, "case_id": _S, "rule": _S, "m1": _I, "m2": _I,
                      "within": _I},
}

FROM_DEFINITIONS = "from_definitions"


@dataclass(frozen=True)
class SchemaCheck:
    """An args_valid unit: what Python needs to validate the calls SQL hands it."""

    case_id: str
    assertion_id: str
    tool: str
    schema: Any
    """A JSON Schema (dict or bool), or FROM_DEFINITIONS."""


@dataclass
class Plan:
    """A compiled suite: parameter frames by table name, plus what SQL tables cannot hold."""

    frames: dict[str, pl.DataFrame]
    wheres: list[tuple[str, str]] = field(default_factory=list)
    """(case id, `select.where`); `p_select.where_idx` is 1-based into this list."""
    schema_checks: dict[int, SchemaCheck] = field(default_factory=dict)
    """args_valid unit id -> what to validate against."""

    def has(self, table: str, **where: Any) -> bool:
        """True when `table` has a row (whose columns equal `where`, if given)."""
        frame = self.frames[table]
        for column, value in where.items():
            frame = frame.filter(pl.col(column) == value)
        return frame.height > 0


def compile_suite(suite: Suite, cases: tuple[Case, ...]) -> Plan:
    """The parameter tables of `cases` (already filtered) of `suite`."""
    builder = _Builder()
    for pos, (pattern, effect) in enumerate(suite.tools):
        glob = is_glob(pattern)
        builder.add("p_tools", pos=pos, regex=glob_to_re2(pattern) if glob
                    else literal_re2(pattern), is_glob=glob, effect=effect)
    for case in cases:
        builder.case(case)
    frames = {name: pl.DataFrame(builder.rows[name], schema=schema)
              for name, schema in SCHEMAS.items()}
    return Plan(frames, builder.wheres, builder.schema_checks)


class _Builder:
    """Accumulates the rows of every parameter table while walking the cases."""

    def __init__(self) -> None:
        self.rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.wheres: list[tuple[str, str]] = []
        self.schema_checks: dict[int, SchemaCheck] = {}
        self._units = 0
        self._matchers = 0

    def add(self, table: str, **row: Any) -> None:
        self.rows[table].append(row)

    def unit(self, case: Case, assertion_id: str, assertion_type: str, *,
             parent: int | None = None, label: str | None = None) -> int:
        self._units += 1
        self.add("p_units", unit_id=self._units, case_id=case.id, assertion_id=assertion_id,
                 assertion_type=assertion_type, parent_id=parent, label=label)
        return self._units

    def matcher(self, case: Case, matcher: ToolMatcher) -> int:
        self._matchers += 1
        self.add("p_matchers", matcher_id=self._matchers, case_id=case.id, tool=matcher.tool,
                 statuses=list(matcher.status) if matcher.status is not None else None,
                 label=matcher_label(matcher))
        for arg, pattern in matcher.args_match:
            parts = arg.split(".")
            self.add("p_matcher_args", matcher_id=self._matchers, key_ptr=_pointer([arg]),
                     path_ptr=_pointer(parts),
                     parent_ptrs=[_pointer(parts[:n]) for n in range(1, len(parts))],
                     pattern=pattern)
        return self._matchers

    # --- cases -----------------------------------------------------------------------

    def case(self, case: Case) -> None:
        self.select(case)
        self.expect(case)
        for assertion in case.assertions:
            self.assertion(case, assertion)

    def select(self, case: Case) -> None:
        sel = case.select
        where_idx = None
        if sel is not None and sel.where is not None:
            self.wheres.append((case.id, sel.where))
            where_idx = len(self.wheres)

        def glob(value: str | None) -> str | None:
            return glob_to_re2(value) if value is not None else None

        self.add("p_select", case_id=case.id, has_select=sel is not None,
                 case_id_re=glob(sel.case_id) if sel else None,
                 agent_re=glob(sel.agent) if sel else None,
                 agent_version_re=glob(sel.agent_version) if sel else None,
                 model_re=glob(sel.model) if sel else None,
                 tags=list(sel.tags) if sel else [], where_idx=where_idx,
                 input=case.input if sel is None else None)

    def expect(self, case: Case) -> None:
        exp = case.expect
        if exp.termination is not None:
            unit = self.unit(case, "termination", "termination")
            self.add("p_termination", unit_id=unit, case_id=case.id,
                     allowed=list(exp.termination))
        for key, column in (("tools_called", "tool"), ("must_mention", "needle"),
                            ("must_not_leak", "needle"), ("confirmations_raised", "tool"),
                            ("writes", "tool"), ("must_not_write", "tool")):
            for index, value in enumerate(getattr(exp, key)):
                unit = self.unit(case, f"{key}[{index}]", key)
                self.add(f"p_{key}", unit_id=unit, case_id=case.id, **{column: value})
        if exp.max_steps is not None:
            unit = self.unit(case, "max_steps", "max_steps")
            self.add("p_max_steps", unit_id=unit, case_id=case.id, max=exp.max_steps)
        unit = self.unit(case, "undeclared_writes", "undeclared_writes")
        self.add("p_undeclared_writes", unit_id=unit, case_id=case.id)
        for tool in exp.writes:
            self.add("p_writes_allowed", case_id=case.id, regex=literal_re2(tool))
        for tool in exp.writes_allowed:
            self.add("p_writes_allowed", case_id=case.id, regex=glob_to_re2(tool))

    # --- typed assertions ------------------------------------------------------------

    def assertion(self, case: Case, a: Assertion) -> None:
        unit = self.unit(case, a.id, a.type)
        if isinstance(a, MustCallTool):
            self.call_count(case, unit, a.matcher, a.min_calls, a.max_calls, False)
        elif isinstance(a, MustNotCallTool):
            self.call_count(case, unit, a.matcher, 0, 0, True)
        elif isinstance(a, ToolSequence):
            self.sequence(case, unit, a.sequence,
                          "subsequence" if a.allow_other_tools else "exact")
        elif isinstance(a, MaxSteps):
            self.add("p_trace_max_steps", unit_id=unit, case_id=case.id, max=a.max,
                     kinds=list(a.kinds) if a.kinds is not None else None)
        elif isinstance(a, ToolBlocklist):
            # an empty list (lint: ineffective) still yields its passing rows: NULL blocks nothing
            for blocked in a.blocked or (None,):
                self.add("p_blocklist", unit_id=unit, case_id=case.id, blocked=blocked,
                         exact=a.exact)
        elif isinstance(a, ArgsValid):
            from_definitions = a.schema == FROM_DEFINITIONS
            self.schema_checks[unit] = SchemaCheck(case.id, a.id, a.tool, a.schema)
            self.add("p_args_valid", unit_id=unit, case_id=case.id, tool=a.tool,
                     from_definitions=from_definitions)
        elif isinstance(a, ToolStatus):
            self.add("p_tool_status", unit_id=unit, case_id=case.id,
                     regex=None if a.tool == "*" else glob_to_re2(a.tool),
                     allow=list(a.allow), label=json.dumps(a.tool, ensure_ascii=False))
        elif isinstance(a, OutputContains):
            self.add("p_output_contains", unit_id=unit, case_id=case.id, value=a.value,
                     ignore_case=a.ignore_case, negate=a.negate)
        elif isinstance(a, OutputMatches):
            self.add("p_output_matches", unit_id=unit, case_id=case.id, pattern=a.pattern,
                     negate=a.negate)
        elif isinstance(a, Retrieval):
            self.retrieval(case, unit, a)
        elif isinstance(a, SequenceValid):
            for index, rule in enumerate(a.rules):
                child = self.unit(case, a.id, a.type, parent=unit,
                                  label=f"rules[{index}] ({rule.type})")
                self.rule(case, child, rule)
        else:  # pragma: no cover - the loader builds only the types above
            raise TypeError(f"no evaluation for assertion type {a.type!r}")

    def call_count(self, case: Case, unit: int, matcher: ToolMatcher, min_calls: int,
                   max_calls: int | None, by_availability: bool) -> None:
        self.add("p_call_counts", unit_id=unit, case_id=case.id,
                 matcher_id=self.matcher(case, matcher), min_calls=min_calls,
                 max_calls=max_calls, by_availability=by_availability,
                 expectation=_expectation(min_calls, max_calls))

    def sequence(self, case: Case, unit: int, items: tuple[ToolMatcher, ...], mode: str) -> None:
        self.add("p_sequences", unit_id=unit, case_id=case.id, mode=mode, n_items=len(items))
        for pos, item in enumerate(items):
            self.add("p_sequence_items", unit_id=unit, pos=pos,
                     matcher_id=self.matcher(case, item))

    def retrieval(self, case: Case, unit: int, a: Retrieval) -> None:
        self.add("p_retrieval", unit_id=unit, case_id=case.id, type=a.type,
                 k=a.k if a.k is not None else len(a.ids), needle=a.content_contains)
        for value in a.ids:
            self.add("p_retrieval_ids", unit_id=unit, id_key=json_key(value),
                     id_label=json.dumps(value, ensure_ascii=False))

    def rule(self, case: Case, unit: int, rule: Rule) -> None:
        if isinstance(rule, RequireRule):
            self.call_count(case, unit, rule.tool, 1, None, False)
        elif isinstance(rule, MaxCallsRule):
            self.call_count(case, unit, rule.tool, 0, rule.max, True)
        elif isinstance(rule, SequenceRule):
            self.sequence(case, unit, rule.tools, "rule_strict" if rule.strict else "rule")
        elif isinstance(rule, BlocklistRule):
            self.add("p_blocklist", unit_id=unit, case_id=case.id, blocked=rule.pattern,
                     exact=rule.exact)
        elif isinstance(rule, (BeforeRule, AfterRule, NeverAfterRule, EventuallyRule)):
            first, second = _order_matchers(rule)
            self.add("p_order_rules", unit_id=unit, case_id=case.id, rule=rule.type,
                     m1=self.matcher(case, first),
                     m2=self.matcher(case, second) if second is not None else None,
                     within=getattr(rule, "within", None))
        else:  # pragma: no cover - the loader builds only the rules above
            raise TypeError(f"no evaluation for sequence rule {rule.type!r}")


def _order_matchers(rule: Rule) -> tuple[ToolMatcher, ToolMatcher | None]:
    if isinstance(rule, BeforeRule):
        return rule.first, rule.then
    if isinstance(rule, AfterRule):
        return rule.trigger, rule.then
    if isinstance(rule, NeverAfterRule):
        return rule.trigger, rule.forbidden
    assert isinstance(rule, EventuallyRule)
    return rule.tool, None


def _expectation(min_calls: int, max_calls: int | None) -> str:
    if max_calls is None:
        return f"at least {min_calls}"
    if max_calls == 0:
        return "none"
    if min_calls == max_calls:
        return f"exactly {min_calls}"
    if min_calls == 0:
        return f"at most {max_calls}"
    return f"{min_calls} to {max_calls}"


def _pointer(parts: list[str]) -> str:
    """An RFC 6901 JSON pointer to the object member path `parts`."""
    return "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in parts)


def json_key(value: Any) -> str:
    """How an id compares as a JSON value (1 != "1"); must equal `chk_json_key` in SQL."""
    if isinstance(value, str):
        return "s:" + value
    return "j:" + json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def matcher_label(matcher: ToolMatcher) -> str:
    """How a tool matcher reads in a failure reason: `"send_money" (recipient~"^US13", status ok)`."""
    name = json.dumps(matcher.tool, ensure_ascii=False)
    parts = [f"{arg}~{json.dumps(pattern, ensure_ascii=False)}"
             for arg, pattern in matcher.args_match]
    if matcher.status is not None:
        parts.append("status " + "|".join(matcher.status))
    return f"{name} ({', '.join(parts)})" if parts else name


__all__ = ["FROM_DEFINITIONS", "SCHEMAS", "Plan", "SchemaCheck", "compile_suite", "json_key",
           "matcher_label"]
