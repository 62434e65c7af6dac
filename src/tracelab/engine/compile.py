"""Compile a suite into parameter tables for the set-based assertion queries.

Every result a case can produce becomes a *unit* (an `expect` item, a typed
assertion, or one rule of a `sequence_valid` entry) with an integer id. Each
assertion family gets one parameter table (`p_<family>`), one row per unit (or
per unit and value); the queries in `sql/engine/assertions/` join those tables with
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

from tracelab.globs import glob_to_re2, is_glob, literal_re2
from tracelab.suite.expect import EXPECT, compile_expect
from tracelab.suite.families import FAMILIES, json_key, tables
from tracelab.suite.model import FROM_DEFINITIONS, Assertion, Case, SchemaCheck, Suite, ToolMatcher
from tracelab.suite.registry import Columns

_TYPES: dict[str, pl.DataType] = {"str": pl.Utf8(), "int": pl.Int64(), "bool": pl.Boolean(),
                                  "list": pl.List(pl.Utf8)}

_SHARED: dict[str, Columns] = {
    # every result unit; rules carry the unit of their sequence_valid entry as parent
    "p_units": {"unit_id": "int", "case_id": "str", "assertion_id": "str",
                "assertion_type": "str", "parent_id": "int", "label": "str"},
    "p_select": {"case_id": "str", "has_select": "bool", "case_id_re": "str", "agent_re": "str",
                 "agent_version_re": "str", "model_re": "str", "tags": "list", "where_idx": "int",
                 "input": "str"},
    "p_tools": {"pos": "int", "regex": "str", "is_glob": "bool", "effect": "str"},
    # one row per tool matcher; `tool` only for a single exact name (the "not offered" reason)
    "p_matchers": {"matcher_id": "int", "case_id": "str", "tool": "str", "label": "str",
                   "unavailable": "str"},
    # one row per branch of a matcher (docs/suites.md §8: any_of) with an exact name or a glob's RE2
    "p_matcher_branches": {"branch_id": "int", "matcher_id": "int", "tool": "str",
                           "tool_re": "str", "statuses": "list"},
    "p_matcher_args": {"branch_id": "int", "key_ptr": "str", "path_ptr": "str",
                       "parent_ptrs": "list", "pattern": "str"},
}

_EXPECT_TABLES = {name: columns for e in EXPECT.values() for name, columns in e.tables.items()}

SCHEMAS: dict[str, dict[str, pl.DataType]] = {
    name: {column: _TYPES[kind] for column, kind in columns.items()}
    for name, columns in {**_SHARED, **_EXPECT_TABLES, **tables()}.items()
}
"""Every parameter table's Polars schema: the shared ones, the `expect` keys', each family's."""




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
    builder = Builder()
    for pos, (pattern, effect) in enumerate(suite.tools):
        glob = is_glob(pattern)
        builder.add("p_tools", pos=pos, regex=glob_to_re2(pattern) if glob
                    else literal_re2(pattern), is_glob=glob, effect=effect)
    for case in cases:
        builder.case(case)
    frames = {name: pl.DataFrame(builder.rows[name], schema=schema)
              for name, schema in SCHEMAS.items()}
    return Plan(frames, builder.wheres, builder.schema_checks)


class Builder:
    """Accumulates the rows of every parameter table while walking the cases.

    Families add their rows through it (`FAMILIES[type].compile`).
    """

    def __init__(self) -> None:
        self.rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.wheres: list[tuple[str, str]] = []
        self.schema_checks: dict[int, SchemaCheck] = {}
        self._ids: dict[str, int] = defaultdict(int)

    def next_id(self, kind: str) -> int:
        """The next id of `kind` ('unit', 'matcher', 'branch'), counting from 1."""
        self._ids[kind] += 1
        return self._ids[kind]

    def add(self, table: str, **row: Any) -> None:
        self.rows[table].append(row)

    def unit(self, case: Case, assertion_id: str, assertion_type: str, *,
             parent: int | None = None, label: str | None = None) -> int:
        """A new result unit of `case`; `parent`: the sequence_valid entry of a rule."""
        unit = self.next_id("unit")
        self.add("p_units", unit_id=unit, case_id=case.id, assertion_id=assertion_id,
                 assertion_type=assertion_type, parent_id=parent, label=label)
        return unit

    def matcher(self, case: Case, matcher: ToolMatcher) -> int:
        """A new matcher of `case` (its branches and argument patterns included)."""
        matcher_id = self.next_id("matcher")
        self.add("p_matchers", matcher_id=matcher_id, case_id=case.id, tool=matcher.tool,
                 label=matcher_label(matcher), unavailable=unavailable_reason(matcher))
        for branch in matcher.branches:
            self.branch(matcher_id, branch)
        return matcher_id

    def branch(self, matcher_id: int, branch: ToolMatcher) -> None:
        branch_id = self.next_id("branch")
        self.add("p_matcher_branches", branch_id=branch_id, matcher_id=matcher_id,
                 tool=branch.tool,
                 tool_re=glob_to_re2(branch.tool_glob) if branch.tool_glob is not None else None,
                 statuses=list(branch.status) if branch.status is not None else None)
        for arg, pattern in branch.args_match:
            parts = arg.split(".")
            self.add("p_matcher_args", branch_id=branch_id, key_ptr=_pointer([arg]),
                     path_ptr=_pointer(parts),
                     parent_ptrs=[_pointer(parts[:n]) for n in range(1, len(parts))],
                     pattern=pattern)

    # --- cases -----------------------------------------------------------------------

    def case(self, case: Case) -> None:
        self.select(case)
        compile_expect(self, case)
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

    # --- typed assertions ------------------------------------------------------------

    def assertion(self, case: Case, a: Assertion) -> None:
        FAMILIES[a.type].compile(self, case, self.unit(case, a.id, a.type), a)

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


def matcher_label(matcher: ToolMatcher) -> str:
    """How a tool matcher reads in a reason: `"send_money" (recipient~"^US13", status ok)`."""
    if matcher.any_of:
        return "any of [" + ", ".join(matcher_label(b) for b in matcher.any_of) + "]"
    name = (json.dumps(matcher.tool, ensure_ascii=False) if matcher.tool is not None
            else f"glob {json.dumps(matcher.tool_glob, ensure_ascii=False)}")
    parts = [f"{arg}~{json.dumps(pattern, ensure_ascii=False)}"
             for arg, pattern in matcher.args_match]
    if matcher.status is not None:
        parts.append("status " + "|".join(matcher.status))
    return f"{name} ({', '.join(parts)})" if parts else name


def unavailable_reason(matcher: ToolMatcher) -> str | None:
    """The reason of a pass by unavailability; None: SQL writes it from the one exact name."""
    if matcher.tool is not None:
        return None
    names = list(dict.fromkeys(
        json.dumps(b.tool, ensure_ascii=False) if b.tool is not None
        else f"tools matching {json.dumps(b.tool_glob, ensure_ascii=False)}"
        for b in matcher.branches))
    if len(names) > 1:
        return f"none of {', '.join(names)} was offered"
    if names[0].startswith("tools matching "):
        return f"no tool matching {names[0].removeprefix('tools matching ')} was offered"
    return f"{names[0]} was not offered"


__all__ = ["FROM_DEFINITIONS", "SCHEMAS", "Builder", "Plan", "SchemaCheck", "compile_suite",
           "json_key", "matcher_label"]
