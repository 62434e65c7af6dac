"""The registry of the `expect` vocabulary: each key of docs/suites.md §2 declared once.

An `ExpectKey` names everything a key needs: how it is read and merged with
`defaults` (the loader), which result ids it yields, the parameter rows it
compiles to and the query of `sql/engine/assertions/` that turns them into
verdicts (the engine), and what the static sweep refuses (lint). The always-on
undeclared-write check is declared here too, as a key no file writes. The
loader, the harness reader, `compile` and `lint` read `EXPECT`; none of them
lists the keys again.

Adding a key: its field in `model.Expect`, one `ExpectKey` here, its query
`sql/engine/assertions/<key>.sql`, and its row in docs/suites.md §2
(tests/test_docs.py demands it).
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from tracelab.globs import glob_to_re2, literal_re2
from tracelab.suite.model import Case, Expect
from tracelab.suite.registry import Builder, Columns, Problem, Query
from tracelab.suite.typed_fields import Fields

Results = Literal["each", "one", "none"]
"""`each`: one result per list item, `<key>[<i>]`; `one`: one result, `<key>`; `none`."""

Finding = tuple[str, Problem]
"""A lint finding of an `expect` key: (result id, (kind, reason))."""


def _no_finding(expect: Expect) -> Iterator[Finding]:
    return iter(())


@dataclass(frozen=True)
class ExpectKey:
    """One key of `expect` (docs/suites.md §2), declared once for every layer that handles it."""

    key: str
    """The key as a tracelab suite writes it, and the field of `model.Expect`."""
    read: Callable[[Fields, str], Any] | None
    """(fields, key as written) -> the value; None: no file writes it (an always-on check)."""
    results: Results
    compile: Callable[[Builder, Case, Any], None]
    """(builder, case, the merged value): add its units and parameter rows."""
    query: Query | None
    """The verdict query its rows feed; None for a key that yields no result."""
    tables: Mapping[str, Columns] = field(default_factory=dict)
    """The parameter tables it owns, with their columns."""
    lint: Callable[[Expect], Iterator[Finding]] = _no_finding
    """(the case's merged expect) -> what the static sweep refuses (docs/suites.md §6)."""

    @property
    def listed(self) -> bool:
        """A list key: merged defaults-first without exact duplicates (docs/suites.md §7)."""
        return self.read is _read_list


# --- reading -------------------------------------------------------------------------------


def _read_list(f: Fields, key: str) -> tuple[str, ...] | None:
    return f.strings(key)


def _read_termination(f: Fields, key: str) -> tuple[str | None, ...] | None:
    return f.strings(key) if isinstance(f.get(key), list) else (f.string(key),)


def _read_max_steps(f: Fields, key: str) -> int | None:
    return f.integer(key, minimum=0)


# --- compiling -----------------------------------------------------------------------------


def _each(key: str, column: str) -> Callable[[Builder, Case, Any], None]:
    """The compile of a list key: one unit `<key>[<i>]` and one row of p_<key> per item."""
    def compile_each(b: Builder, case: Case, values: tuple[str, ...]) -> None:
        for index, value in enumerate(values):
            unit = b.unit(case, f"{key}[{index}]", key)
            b.add(f"p_{key}", unit_id=unit, case_id=case.id, **{column: value})
    return compile_each


def _compile_termination(b: Builder, case: Case, allowed: tuple[str, ...] | None) -> None:
    if allowed is not None:
        unit = b.unit(case, "termination", "termination")
        b.add("p_termination", unit_id=unit, case_id=case.id, allowed=list(allowed))


def _compile_writes(b: Builder, case: Case, tools: tuple[str, ...]) -> None:
    _each("writes", "tool")(b, case, tools)
    for tool in tools:  # an expected write is also an allowed one, by its exact name
        b.add("p_writes_allowed", case_id=case.id, regex=literal_re2(tool))


def _compile_writes_allowed(b: Builder, case: Case, tools: tuple[str, ...]) -> None:
    for tool in tools:
        b.add("p_writes_allowed", case_id=case.id, regex=glob_to_re2(tool))


def _compile_max_steps(b: Builder, case: Case, max_steps: int | None) -> None:
    if max_steps is not None:
        unit = b.unit(case, "max_steps", "max_steps")
        b.add("p_max_steps", unit_id=unit, case_id=case.id, max=max_steps)


def _compile_undeclared_writes(b: Builder, case: Case, value: None) -> None:
    unit = b.unit(case, "undeclared_writes", "undeclared_writes")
    b.add("p_undeclared_writes", unit_id=unit, case_id=case.id)


# --- lint ----------------------------------------------------------------------------------


def _empty_tool(key: str) -> Callable[[Expect], Iterator[Finding]]:
    def lint(expect: Expect) -> Iterator[Finding]:
        for index, tool in enumerate(getattr(expect, key)):
            if tool == "":
                yield f"{key}[{index}]", ("ineffective", "an empty tool name")
    return lint


def _lint_termination(expect: Expect) -> Iterator[Finding]:
    if expect.termination == ():
        yield "termination", ("contradictory", "an empty termination list matches no run")


def _lint_must_mention(expect: Expect) -> Iterator[Finding]:
    for index, needle in enumerate(expect.must_mention):
        if needle == "":
            yield f"must_mention[{index}]", ("ineffective",
                                             "an empty string is mentioned by every run")


def _lint_must_not_leak(expect: Expect) -> Iterator[Finding]:
    for index, needle in enumerate(expect.must_not_leak):
        if needle == "":
            yield f"must_not_leak[{index}]", (
                "contradictory", "an empty string occurs in every transcript, so every run leaks it")


def _lint_must_not_write(expect: Expect) -> Iterator[Finding]:
    yield from _empty_tool("must_not_write")(expect)
    writes = {tool: i for i, tool in reversed(list(enumerate(expect.writes)))}
    for index, tool in enumerate(expect.must_not_write):
        if tool in writes:
            yield f"must_not_write[{index}]", (
                "contradictory",
                f"{tool!r} is also in writes[{writes[tool]}]: it must and must not write")


# --- the registry --------------------------------------------------------------------------


def _tool_list(key: str, column: str = "tool") -> ExpectKey:
    """A list key with one result per item, read from p_<key>(unit_id, case_id, <column>)."""
    return ExpectKey(key, _read_list, "each", _each(key, column), Query(key, f"p_{key}"),
                     tables={f"p_{key}": {"unit_id": "int", "case_id": "str", column: "str"}},
                     lint=_empty_tool(key))


_DECLARED: tuple[ExpectKey, ...] = (
    ExpectKey("termination", _read_termination, "one", _compile_termination,
              Query("termination", "p_termination"),
              tables={"p_termination": {"unit_id": "int", "case_id": "str", "allowed": "list"}},
              lint=_lint_termination),
    _tool_list("tools_called"),
    ExpectKey("must_mention", _read_list, "each", _each("must_mention", "needle"),
              Query("must_mention", "p_must_mention"),
              tables={"p_must_mention": {"unit_id": "int", "case_id": "str", "needle": "str"}},
              lint=_lint_must_mention),
    ExpectKey("must_not_leak", _read_list, "each", _each("must_not_leak", "needle"),
              Query("must_not_leak", "p_must_not_leak"),
              tables={"p_must_not_leak": {"unit_id": "int", "case_id": "str", "needle": "str"}},
              lint=_lint_must_not_leak),
    _tool_list("confirmations_raised"),
    ExpectKey("writes", _read_list, "each", _compile_writes, Query("writes", "p_writes"),
              tables={"p_writes": {"unit_id": "int", "case_id": "str", "tool": "str"}},
              lint=_empty_tool("writes")),
    ExpectKey("writes_allowed", _read_list, "none", _compile_writes_allowed, None,
              tables={"p_writes_allowed": {"case_id": "str", "regex": "str"}},
              lint=_empty_tool("writes_allowed")),
    ExpectKey("must_not_write", _read_list, "each", _each("must_not_write", "tool"),
              Query("must_not_write", "p_must_not_write"),
              tables={"p_must_not_write": {"unit_id": "int", "case_id": "str", "tool": "str"}},
              lint=_lint_must_not_write),
    ExpectKey("max_steps", _read_max_steps, "one", _compile_max_steps,
              Query("max_steps", "p_max_steps"),
              tables={"p_max_steps": {"unit_id": "int", "case_id": "str", "max": "int"}}),
    ExpectKey("undeclared_writes", None, "one", _compile_undeclared_writes,
              Query("undeclared_writes", "p_undeclared_writes"),
              tables={"p_undeclared_writes": {"unit_id": "int", "case_id": "str"}}),
)
EXPECT: dict[str, ExpectKey] = {key.key: key for key in _DECLARED}
"""Every `expect` key of docs/suites.md §2 and the always-on undeclared-write check, in order."""

EXPECT_KEYS: tuple[str, ...] = tuple(k for k, e in EXPECT.items() if e.read is not None)
"""The keys an `expect` (or `defaults`) mapping takes."""

EXPECT_QUERIES: tuple[Query, ...] = tuple(e.query for e in EXPECT.values() if e.query is not None)
"""The verdict queries of the `expect` vocabulary, one per result-yielding key."""


def read_expect_values(f: Fields, names: Mapping[str, str]) -> dict[str, Any]:
    """The present keys of an `expect` (or `defaults`) mapping, by model field name.

    `names` maps the file's key to the model field (identity for tracelab suites,
    camelCase for the harness), so messages name the key as written.
    """
    values: dict[str, Any] = {}
    for key in f.keys():
        read = EXPECT[names[key]].read
        assert read is not None  # `names` maps only to keys a file writes
        values[names[key]] = read(f, key)
    return values


def merge_expect(defaults: Mapping[str, Any], own: Mapping[str, Any]) -> Expect:
    """§7: lists concatenated defaults-first without exact duplicates; scalars: the case wins."""
    fields: dict[str, Any] = {}
    for name in EXPECT_KEYS:
        if EXPECT[name].listed:
            merged = (defaults.get(name) or ()) + (own.get(name) or ())
            fields[name] = tuple(dict.fromkeys(merged))
        else:
            fields[name] = own[name] if name in own else defaults.get(name)
    return Expect(**fields)


def expect_result_ids(expect: Expect) -> set[str]:
    """Every result id the `expect` of a case can yield (the always-on ones included)."""
    ids: set[str] = set()
    for name, declared in EXPECT.items():
        if declared.results == "one":
            ids.add(name)
        elif declared.results == "each":
            ids.update(f"{name}[{i}]" for i in range(len(getattr(expect, name))))
    return ids


def compile_expect(b: Builder, case: Case) -> None:
    """The units and parameter rows of the case's `expect`, in registry order."""
    for name, declared in EXPECT.items():
        declared.compile(b, case, getattr(case.expect, name, None))


def lint_expect(expect: Expect) -> Iterator[Finding]:
    """What the static sweep refuses in a case's merged `expect`, in registry order."""
    for declared in EXPECT.values():
        yield from declared.lint(expect)


__all__ = ["EXPECT", "EXPECT_KEYS", "EXPECT_QUERIES", "ExpectKey", "compile_expect",
           "expect_result_ids", "lint_expect", "merge_expect", "read_expect_values"]
