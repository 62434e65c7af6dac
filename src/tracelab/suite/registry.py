"""What every declaration of the suite vocabulary shares: queries, tables, findings, the builder.

The vocabulary is declared once per construct: an assertion family
(`families.FAMILIES`), an `expect` key (`expect.EXPECT`), a sequence rule
(`rules.RULES`). Each declaration says how it is read, what parameter rows it
compiles to (through a `Builder`, which the engine implements), which query of
`sql/engine/assertions/` turns those rows into verdicts, and what the static
sweep refuses. This module holds only the shapes they share, so that the
declarations import neither the engine nor the static sweep.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from tracelab.suite.model import Case, SchemaCheck, ToolMatcher

Columns = Mapping[str, str]
"""A parameter table's columns: name -> 'str', 'int', 'bool' or 'list' (of strings)."""

FindingKind = Literal["ineffective", "contradictory"]
"""What the static sweep refuses: cannot fail on any trace, or cannot pass (docs/suites.md §6)."""

Problem = tuple[FindingKind, str]
"""A lint finding of one result: (kind, reason)."""


@dataclass(frozen=True)
class Query:
    """A query of `sql/engine/assertions/`, run when its parameter table has a row (matching `where`)."""

    name: str
    table: str
    where: tuple[tuple[str, Any], ...] = ()


# --- parameter tables shared by an assertion family and a sequence rule ----------------------

CALL_COUNTS: dict[str, Columns] = {
    "p_call_counts": {"unit_id": "int", "case_id": "str", "matcher_id": "int", "min_calls": "int",
                      "max_calls": "int", "by_availability": "bool", "expectation": "str"},
}
CALL_COUNT_QUERY = Query("trace_must_call_tool", "p_call_counts")
"""trace_must_call_tool, trace_must_not_call_tool, and the rules `require` and `max_calls`."""

SEQUENCES: dict[str, Columns] = {
    "p_sequences": {"unit_id": "int", "case_id": "str", "mode": "str", "n_items": "int"},
    "p_sequence_items": {"unit_id": "int", "pos": "int", "matcher_id": "int"},
}
SEQUENCE_QUERY = Query("trace_tool_sequence", "p_sequences")
"""trace_tool_sequence and the rule `sequence`."""

BLOCKLIST: dict[str, Columns] = {
    "p_blocklist": {"unit_id": "int", "case_id": "str", "blocked": "str", "exact": "bool"},
}
BLOCKLIST_QUERY = Query("tool_blocklist", "p_blocklist")
"""tool_blocklist and the rule `blocklist`."""


class Builder(Protocol):
    """Where declarations add their parameter rows (`tracelab.engine.compile.Builder`)."""

    schema_checks: dict[int, SchemaCheck]

    def add(self, table: str, **row: Any) -> None:
        """One row of parameter table `table`."""

    def unit(self, case: Case, assertion_id: str, assertion_type: str, *,
             parent: int | None = None, label: str | None = None) -> int:
        """A new result unit of `case`; `parent`: the sequence_valid entry of a rule."""

    def matcher(self, case: Case, matcher: ToolMatcher) -> int:
        """A new matcher of `case` (its branches and argument patterns included)."""

    def call_count(self, case: Case, unit: int, matcher: ToolMatcher, min_calls: int,
                   max_calls: int | None, by_availability: bool) -> None:
        """A row of p_call_counts: matching calls number within [min_calls, max_calls]."""

    def sequence(self, case: Case, unit: int, items: tuple[ToolMatcher, ...], mode: str) -> None:
        """A row of p_sequences and its items."""


__all__ = ["BLOCKLIST", "BLOCKLIST_QUERY", "CALL_COUNTS", "CALL_COUNT_QUERY", "SEQUENCES",
           "SEQUENCE_QUERY", "Builder", "Columns", "FindingKind", "Problem", "Query"]
