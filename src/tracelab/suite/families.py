"""The registry of assertion families: each `type` of docs/suites.md §3 declared once.

A `Family` names everything a `type` needs: its model class, the keys it takes
and how they are read (the loader), the parameter table rows it compiles to and
the table's columns (the compiler), what the static sweep refuses (lint), the
query in `sql/engine/assertions/` that turns the table into verdict rows (the
evaluator), and its `exercised` rule of docs/suites.md §5 in words (the docs test
holds docs/suites.md to it). The loader, `compile`, `lint` and `evaluate` read
`FAMILIES`; none of them lists the types again.

Adding a family: its model class in `model.py`, one `Family` here (with its
functions), `sql/engine/assertions/<name>.sql`, and its section in docs/suites.md.
"""
from __future__ import annotations

import builtins
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from tracelab.documents import line_of, raw_of
from tracelab.globs import glob_to_re2
from tracelab.native_keys import STEP_KINDS
from tracelab.suite._parse import (
    Env,
    check_pattern,
    matcher_at,
    read_matchers,
    read_schema,
    read_statuses,
    to_json,
    unknown_name,
)
from tracelab.suite.expect import EXPECT_QUERIES
from tracelab.suite.model import (
    FROM_DEFINITIONS,
    ArgsValid,
    Assertion,
    Case,
    MaxSteps,
    MustCallTool,
    MustNotCallTool,
    OutputContains,
    OutputMatches,
    Retrieval,
    SchemaCheck,
    SequenceValid,
    ToolBlocklist,
    ToolMatcher,
    ToolSequence,
    ToolStatus,
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
from tracelab.suite.rules import RULES, read_rule, rule_matchers
from tracelab.suite.schemas import schema_validator
from tracelab.suite.typed_fields import Ctx, Fields, check_str, describe

A = TypeVar("A", bound=Assertion)

FIXTURE_KEYS = ("test_args", "policy", "expect")
ASSAY_BLOCKLIST_FIXTURE_KEYS = ("test_tool_calls", "policy", "expect")
ASSAY_SEQUENCE_FIXTURE_KEYS = ("test_trace", "test_trace_raw", "policy", "expect")
_ANNOTATIONS = frozenset({"$schema", "$id", "$comment", "title", "description", "examples",
                          "default", "deprecated", "readOnly", "writeOnly", "format", "$defs",
                          "definitions"})
"""Keywords that constrain nothing: a schema made of these alone accepts every value."""


@dataclass(frozen=True)
class Family(Generic[A]):
    """One assertion `type` of docs/suites.md §3, declared once for every layer that handles it."""

    type: str
    model: builtins.type[A]  # `type` here would mean the field above
    keys: tuple[str, ...]
    """The keys an entry takes besides `type` and `id`."""
    read: Callable[[Fields, str, str, Env], A | None]
    """(fields, id, type, env) -> the assertion, or None for a fixture checked at load."""
    compile: Callable[[Builder, Case, int, A], None]
    """(builder, case, unit id, assertion): add its parameter rows."""
    queries: tuple[Query, ...]
    """The verdict queries its rows feed (several families may share one)."""
    exercised: str
    """When a passing result is `exercised = no` or `unknown` (docs/suites.md §5), in words."""
    tables: Mapping[str, Columns] = field(default_factory=dict)
    """The parameter tables it owns, with their columns."""
    lint: Callable[[A, Mapping[str, int]], Iterator[Problem]] = lambda a, called: iter(())
    """(assertion, tools_called index by name) -> what the static sweep refuses (docs/suites.md §6)."""
    matchers: Callable[[A], Iterator[tuple[str, ToolMatcher]]] = lambda a: iter(())
    """(where, matcher) for each tool matcher it holds; lint checks them all alike."""


# --- trace_must_call_tool, trace_must_not_call_tool ---------------------------------------



def _read_must_call(f: Fields, ident: str, kind: str, env: Env) -> MustCallTool:
    f.require("tool")
    return MustCallTool(id=ident, type=kind, matcher=matcher_at(f, "tool", env),
                        min_calls=f.integer("min_calls", 1, minimum=0),
                        max_calls=f.integer("max_calls", minimum=0))


def _compile_must_call(b: Builder, case: Case, unit: int, a: MustCallTool) -> None:
    b.call_count(case, unit, a.matcher, a.min_calls, a.max_calls, False)


def _lint_must_call(a: MustCallTool, called: Mapping[str, int]) -> Iterator[Problem]:
    if a.min_calls == 0 and a.max_calls is None:
        yield "ineffective", "min_calls 0 with no max_calls holds for every run"
    if a.max_calls is not None and a.min_calls > a.max_calls:
        yield "contradictory", f"min_calls {a.min_calls} is above max_calls {a.max_calls}"


def _read_must_not_call(f: Fields, ident: str, kind: str, env: Env) -> MustNotCallTool:
    f.require("tool")
    return MustNotCallTool(id=ident, type=kind, matcher=matcher_at(f, "tool", env))


def _compile_must_not_call(b: Builder, case: Case, unit: int, a: MustNotCallTool) -> None:
    b.call_count(case, unit, a.matcher, 0, 0, True)


def _lint_must_not_call(a: MustNotCallTool, called: Mapping[str, int]) -> Iterator[Problem]:
    tool = a.matcher.tool
    if a.matcher.plain and tool is not None and tool in called:
        yield "contradictory", (f"{tool!r} is also in tools_called"
                                f"[{called[tool]}]: it must and must not be called")


def _tool_matcher(a: MustCallTool | MustNotCallTool) -> Iterator[tuple[str, ToolMatcher]]:
    yield "tool", a.matcher


# --- trace_tool_sequence (and the sequence rule `sequence`) --------------------------------



def _read_tool_sequence(f: Fields, ident: str, kind: str, env: Env) -> ToolSequence:
    f.require("sequence", "allow_other_tools")
    sequence = read_matchers(f, "sequence", env)
    for index, matcher in enumerate(sequence):
        if matcher.any_of:  # docs/suites.md §3: a sequence lists tools, one per item
            raise f.ctx.at("sequence").at(index).error(
                "any_of is not accepted in a trace_tool_sequence; list one tool per item "
                "(sequence_valid's `sequence` rule takes any_of)", line_of(f.get("sequence"), index))
    return ToolSequence(id=ident, type=kind, sequence=sequence,
                        allow_other_tools=f.need_boolean("allow_other_tools"))


def _compile_tool_sequence(b: Builder, case: Case, unit: int, a: ToolSequence) -> None:
    b.sequence(case, unit, a.sequence, "subsequence" if a.allow_other_tools else "exact")


def _lint_tool_sequence(a: ToolSequence, called: Mapping[str, int]) -> Iterator[Problem]:
    if not a.sequence and a.allow_other_tools:
        yield "ineffective", "sequence: [] with allow_other_tools: true holds for every run"


def _sequence_matchers(a: ToolSequence) -> Iterator[tuple[str, ToolMatcher]]:
    for index, matcher in enumerate(a.sequence):
        yield f"sequence[{index}]", matcher


# --- trace_max_steps -----------------------------------------------------------------------


def _read_max_steps(f: Fields, ident: str, kind: str, env: Env) -> MaxSteps:
    f.require("max")
    return MaxSteps(id=ident, type=kind, max=f.need_integer("max", minimum=0),
                    kinds=f.choices("kinds", STEP_KINDS, "a step kind"))


def _compile_max_steps(b: Builder, case: Case, unit: int, a: MaxSteps) -> None:
    b.add("p_trace_max_steps", unit_id=unit, case_id=case.id, max=a.max,
          kinds=list(a.kinds) if a.kinds is not None else None)


def _lint_max_steps(a: MaxSteps, called: Mapping[str, int]) -> Iterator[Problem]:
    if a.kinds == ():
        yield "ineffective", "kinds: [] counts no step"


# --- tool_blocklist (and the sequence rule `blocklist`) ------------------------------------



def _read_blocklist(f: Fields, ident: str, kind: str, env: Env) -> ToolBlocklist | None:
    if env.assay and any(f.has(k) for k in ASSAY_BLOCKLIST_FIXTURE_KEYS):
        _assay_blocklist_fixture(f)
        return None
    f.require("blocked")
    return ToolBlocklist(id=ident, type=kind, blocked=f.strings("blocked") or (),
                         exact=env.assay)


def _assay_blocklist_fixture(f: Fields) -> None:
    """Assay's tool_blocklist fixture: `test_tool_calls` against `policy.blocked`, at load."""
    if f.has("blocked"):
        raise f.err("blocked", "give either `blocked` or the fixture keys "
                               "(test_tool_calls, policy, expect), not both")
    f.require("policy")
    policy = f.sub("policy", ("blocked",), "a tool_blocklist policy")
    policy.require("blocked")
    blocked = set(policy.strings("blocked") or ())
    calls = f.strings("test_tool_calls") or ()
    _fixture_outcome(f, passed=not any(call in blocked for call in calls),
                     what="test_tool_calls against policy.blocked")


def _fixture_outcome(f: Fields, passed: bool, what: str) -> None:
    expect = f.string("expect", "pass")
    if expect not in ("pass", "fail"):
        raise f.err("expect", f"expected pass or fail, got {expect!r}")
    if passed != (expect == "pass"):
        outcome = "passes" if passed else "fails"
        raise f.ctx.error(f"fixture expects {expect}, but {what} {outcome}", f.own_line)


def _compile_blocklist(b: Builder, case: Case, unit: int, a: ToolBlocklist) -> None:
    # an empty list (lint: ineffective) still yields its passing rows: NULL blocks nothing
    for blocked in a.blocked or (None,):
        b.add("p_blocklist", unit_id=unit, case_id=case.id, blocked=blocked, exact=a.exact)


def _lint_blocklist(a: ToolBlocklist, called: Mapping[str, int]) -> Iterator[Problem]:
    if not a.blocked:
        yield "ineffective", "an empty blocked list blocks nothing"


# --- args_valid ----------------------------------------------------------------------------


def _read_args_valid(f: Fields, ident: str, kind: str, env: Env) -> ArgsValid | None:
    f.require("tool")
    tool = f.string("tool")
    if any(f.has(k) for k in FIXTURE_KEYS):
        if f.has("schema"):
            raise f.err("schema", "give either `schema` or the fixture keys "
                                  "(test_args, policy, expect), not both")
        _args_fixture(f, env)
        return None
    f.require("schema")
    value = f.get("schema")
    if isinstance(value, str):
        if value != FROM_DEFINITIONS:
            raise f.err("schema", f"expected a schema, {{$file: path}} or 'from_definitions', "
                                  f"got {value!r}")
        schema: Any = value
    else:
        schema = read_schema(value, f.ctx.at("schema"), f.line("schema"), env)
    return ArgsValid(id=ident, type=kind, tool=tool or "", schema=schema)


def _args_fixture(f: Fields, env: Env) -> None:
    """Assay's args_valid fixture: `test_args` against `policy.schema`, once, at load."""
    f.require("policy")
    policy = f.sub("policy", ("schema",), "an args_valid policy")
    policy.require("schema")
    schema = read_schema(policy.get("schema"), policy.ctx.at("schema"), policy.line("schema"),
                         env)
    args = to_json(f.get("test_args", {}), f.ctx.at("test_args"), f.line("test_args"))
    _fixture_outcome(f, passed=schema_validator(schema).is_valid({} if args is None else args),
                     what="test_args against policy.schema")


def _compile_args_valid(b: Builder, case: Case, unit: int, a: ArgsValid) -> None:
    b.schema_checks[unit] = SchemaCheck(case.id, a.id, a.tool, a.schema)
    b.add("p_args_valid", unit_id=unit, case_id=case.id, tool=a.tool,
          from_definitions=a.schema == FROM_DEFINITIONS)


def _lint_args_valid(a: ArgsValid, called: Mapping[str, int]) -> Iterator[Problem]:
    if a.tool == "":
        yield "ineffective", "an empty tool name"
    if a.schema is True or (isinstance(a.schema, dict) and set(a.schema) <= _ANNOTATIONS):
        yield "ineffective", "the schema accepts every value ({} or true)"


# --- tool_status ---------------------------------------------------------------------------


def _read_tool_status(f: Fields, ident: str, kind: str, env: Env) -> ToolStatus:
    f.require("tool")
    allow = read_statuses(f, "allow", allow_empty=True)
    return ToolStatus(id=ident, type=kind, tool=f.string("tool") or "",
                      allow=("ok",) if allow is None else allow)


def _compile_tool_status(b: Builder, case: Case, unit: int, a: ToolStatus) -> None:
    b.add("p_tool_status", unit_id=unit, case_id=case.id,
          regex=None if a.tool == "*" else glob_to_re2(a.tool),
          allow=list(a.allow), label=json.dumps(a.tool, ensure_ascii=False))


def _lint_tool_status(a: ToolStatus, called: Mapping[str, int]) -> Iterator[Problem]:
    if a.tool == "":
        yield "ineffective", "an empty tool name"


# --- output_contains, output_not_contains, output_matches, output_not_matches --------------


def _read_output_contains(f: Fields, ident: str, kind: str, env: Env) -> OutputContains:
    f.require("value")
    return OutputContains(id=ident, type=kind, value=f.string("value") or "",
                          ignore_case=bool(f.boolean("ignore_case", False)),
                          negate=kind == "output_not_contains")


def _compile_output_contains(b: Builder, case: Case, unit: int, a: OutputContains) -> None:
    b.add("p_output_contains", unit_id=unit, case_id=case.id, value=a.value,
          ignore_case=a.ignore_case, negate=a.negate)


def _read_output_matches(f: Fields, ident: str, kind: str, env: Env) -> OutputMatches:
    f.require("pattern")
    pattern = check_pattern(f.string("pattern") or "", f.ctx.at("pattern"), f.line("pattern"),
                            env)
    return OutputMatches(id=ident, type=kind, pattern=pattern,
                         negate=kind == "output_not_matches")


def _compile_output_matches(b: Builder, case: Case, unit: int, a: OutputMatches) -> None:
    b.add("p_output_matches", unit_id=unit, case_id=case.id, pattern=a.pattern, negate=a.negate)


# --- sequence_valid: one unit per rule, each compiled by its declaration (rules.RULES) ------


def _read_sequence_valid(f: Fields, ident: str, kind: str, env: Env) -> SequenceValid:
    f.require("rules")
    rules = tuple(read_rule(item, ctx, line, env) for item, ctx, line, _ in f.items("rules"))
    return SequenceValid(id=ident, type=kind, rules=rules)


def _compile_sequence_valid(b: Builder, case: Case, unit: int, a: SequenceValid) -> None:
    for index, rule in enumerate(a.rules):
        child = b.unit(case, a.id, a.type, parent=unit, label=f"rules[{index}] ({rule.type})")
        RULES[rule.type].compile(b, case, child, rule)


def _lint_sequence_valid(a: SequenceValid, called: Mapping[str, int]) -> Iterator[Problem]:
    if not a.rules:
        yield "ineffective", "rules: [] holds for every run"
    for index, rule in enumerate(a.rules):
        for kind, reason in RULES[rule.type].lint(rule):
            yield kind, f"rules[{index}] ({rule.type}): {reason}"


def _rule_matchers(a: SequenceValid) -> Iterator[tuple[str, ToolMatcher]]:
    for index, rule in enumerate(a.rules):
        for key, matcher in rule_matchers(rule):
            yield f"rules[{index}].{key}", matcher


_RULE_QUERIES = tuple(dict.fromkeys(r.query for r in RULES.values()))
_RULE_TABLES = {name: columns for r in RULES.values() for name, columns in r.tables.items()}


# --- retrieval_* ---------------------------------------------------------------------------

RETRIEVAL: dict[str, Columns] = {
    "p_retrieval": {"unit_id": "int", "case_id": "str", "type": "str", "k": "int",
                    "needle": "str"},
    "p_retrieval_ids": {"unit_id": "int", "id_key": "str", "id_label": "str"},
}
_NO_RETRIEVAL = "the run has no `retrieval` step"


def _read_retrieval(f: Fields, ident: str, kind: str, env: Env) -> Retrieval:
    if kind == "retrieval_top":
        f.require("ids")
        ids = tuple(_retrieval_id(item, ctx, line, raw) for item, ctx, line, raw in f.items("ids"))
        return Retrieval(id=ident, type=kind, ids=ids,
                         k=f.integer("k", len(ids), minimum=0))
    if kind == "retrieval_excludes":
        f.require("content_contains")
        return Retrieval(id=ident, type=kind, content_contains=f.string("content_contains"))
    return Retrieval(id=ident, type=kind)


def _retrieval_id(value: Any, ctx: Ctx, line: int | None, raw: str | None) -> Any:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ctx.error(f"a retrieval id must be a string or a number, got {describe(value, raw)}",
                        line)
    return value


def _compile_retrieval(b: Builder, case: Case, unit: int, a: Retrieval) -> None:
    b.add("p_retrieval", unit_id=unit, case_id=case.id, type=a.type,
          k=a.k if a.k is not None else len(a.ids), needle=a.content_contains)
    for value in a.ids:
        b.add("p_retrieval_ids", unit_id=unit, id_key=json_key(value),
              id_label=json.dumps(value, ensure_ascii=False))


def _lint_retrieval(a: Retrieval, called: Mapping[str, int]) -> Iterator[Problem]:
    if a.type == "retrieval_top" and not a.ids:
        yield "ineffective", "ids: [] requires nothing"


def json_key(value: Any) -> str:
    """How an id compares as a JSON value (1 != "1"); must equal `chk_json_key` in SQL."""
    if isinstance(value, str):
        return "s:" + value
    return "j:" + json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _retrieval_family(kind: str, keys: tuple[str, ...], exercised: str) -> Family[Retrieval]:
    return Family(kind, Retrieval, keys, _read_retrieval, _compile_retrieval,
                  (Query(kind, "p_retrieval", (("type", kind),)),), exercised,
                  tables=RETRIEVAL, lint=_lint_retrieval)


# --- the registry --------------------------------------------------------------------------

_UNAVAILABLE = ("`no` when the tool is known unavailable (docs/trace-format.md §4; by name, ignoring "
                "`args_match` and `status`; a glob or `any_of` by all its names, §8), `unknown` "
                "when its availability is unknown")
_NEVER = "never: `yes`"

_DECLARED: tuple[Family[Any], ...] = (
    Family("trace_must_call_tool", MustCallTool, ("tool", "min_calls", "max_calls"),
           _read_must_call, _compile_must_call, (CALL_COUNT_QUERY,), _NEVER,
           tables=CALL_COUNTS, lint=_lint_must_call, matchers=_tool_matcher),
    Family("trace_must_not_call_tool", MustNotCallTool, ("tool",),
           _read_must_not_call, _compile_must_not_call, (CALL_COUNT_QUERY,), _UNAVAILABLE,
           tables=CALL_COUNTS, lint=_lint_must_not_call, matchers=_tool_matcher),
    Family("trace_tool_sequence", ToolSequence, ("sequence", "allow_other_tools"),
           _read_tool_sequence, _compile_tool_sequence, (SEQUENCE_QUERY,), _NEVER,
           tables=SEQUENCES, lint=_lint_tool_sequence, matchers=_sequence_matchers),
    Family("trace_max_steps", MaxSteps, ("max", "kinds"),
           _read_max_steps, _compile_max_steps,
           (Query("trace_max_steps", "p_trace_max_steps"),),
           "`no` when the episode has no step (of those kinds)",
           tables={"p_trace_max_steps": {"unit_id": "int", "case_id": "str", "max": "int",
                                         "kinds": "list"}},
           lint=_lint_max_steps),
    Family("tool_blocklist", ToolBlocklist, ("blocked",),
           _read_blocklist, _compile_blocklist, (BLOCKLIST_QUERY,),
           "`no` when tools are declared and neither a definition's nor a call's name contains "
           "a blocked substring; `unknown` when tools are not declared and no call's does",
           tables=BLOCKLIST, lint=_lint_blocklist),
    Family("args_valid", ArgsValid, ("tool", "schema", *FIXTURE_KEYS),
           _read_args_valid, _compile_args_valid, (),
           "`no` when no call of the tool is in the run; `unknown` with `from_definitions` "
           "when no call had recorded parameters",
           tables={"p_args_valid": {"unit_id": "int", "case_id": "str", "tool": "str",
                                    "from_definitions": "bool"}},
           lint=_lint_args_valid),
    Family("tool_status", ToolStatus, ("tool", "allow"),
           _read_tool_status, _compile_tool_status, (Query("tool_status", "p_tool_status"),),
           "`no` when no call matches the tool in the run",
           tables={"p_tool_status": {"unit_id": "int", "case_id": "str", "regex": "str",
                                     "allow": "list", "label": "str"}},
           lint=_lint_tool_status),
    *(Family(kind, OutputContains, ("value", "ignore_case"),
             _read_output_contains, _compile_output_contains,
             (Query("output_contains", "p_output_contains"),),
             _NEVER if kind == "output_contains" else "`no` when the run recorded no final output",
             tables={"p_output_contains": {"unit_id": "int", "case_id": "str", "value": "str",
                                           "ignore_case": "bool", "negate": "bool"}})
      for kind in ("output_contains", "output_not_contains")),
    *(Family(kind, OutputMatches, ("pattern",),
             _read_output_matches, _compile_output_matches,
             (Query("output_matches", "p_output_matches"),),
             _NEVER if kind == "output_matches" else "`no` when the run recorded no final output",
             tables={"p_output_matches": {"unit_id": "int", "case_id": "str", "pattern": "str",
                                          "negate": "bool"}})
      for kind in ("output_matches", "output_not_matches")),
    Family("sequence_valid", SequenceValid, ("rules",),
           _read_sequence_valid, _compile_sequence_valid,
           _RULE_QUERIES,
           "`no` when every rule is `no`; `unknown` when no rule is `yes` and some rule is "
           "`unknown` (each rule as in the table's rule rows)",
           tables=_RULE_TABLES,
           lint=_lint_sequence_valid, matchers=_rule_matchers),
    _retrieval_family("retrieval_reports_omissions", (), f"`no` when {_NO_RETRIEVAL}"),
    _retrieval_family("retrieval_excludes_superseded", (), f"`no` when {_NO_RETRIEVAL}"),
    _retrieval_family("retrieval_top", ("ids", "k"), f"`no` when {_NO_RETRIEVAL}"),
    _retrieval_family("retrieval_excludes", ("content_contains",), f"`no` when {_NO_RETRIEVAL}"),
    _retrieval_family("retrieval_within_budget", (),
                      f"`no` when {_NO_RETRIEVAL} with `budget_bytes`"),
)
FAMILIES: dict[str, Family[Any]] = {family.type: family for family in _DECLARED}
"""Every assertion type of docs/suites.md §3, in the order of its table."""

ASSERTION_KEYS: dict[str, tuple[str, ...]] = {kind: f.keys for kind, f in FAMILIES.items()}
"""The keys each assertion type takes besides `type` and `id`."""

def queries() -> tuple[Query, ...]:
    """Every verdict query once, the `expect` ones first, then in registry order."""
    found = [*EXPECT_QUERIES, *(q for f in FAMILIES.values() for q in f.queries)]
    return tuple(dict.fromkeys(found))


def tables() -> dict[str, Columns]:
    """Every parameter table the families own, with its columns."""
    return {name: columns for f in FAMILIES.values() for name, columns in f.tables.items()}


# --- reading: the loader's dispatch --------------------------------------------------------


def read_assertions(f: Fields, env: Env, taken: set[str]) -> tuple[Assertion, ...]:
    """The `assertions` list of a case; ids default to `<type>[<index>]` and must be unique.

    `taken` holds the case's other result ids; it is extended with every id read.
    Fixture entries (args_valid with `test_args`, Assay's blocklist fixture) are
    checked here, once, and yield no assertion.
    """
    if not f.has("assertions") or f.get("assertions") is None:
        return ()
    out = []
    for index, (entry, ctx, line, _) in enumerate(f.items("assertions")):
        assertion = read_assertion(entry, index, ctx, line, env, taken)
        if assertion is not None:
            out.append(assertion)
    return tuple(out)


def read_assertion(entry: Any, index: int, ctx: Ctx, line: int | None, env: Env,
                   taken: set[str]) -> Assertion | None:
    """One typed assertion (docs/suites.md §3), or None for a fixture checked at load."""
    if not isinstance(entry, Mapping):
        raise ctx.error(f"an assertion must be a mapping with a `type`, got {describe(entry)}",
                        line)
    if "type" not in entry:
        raise ctx.error("an assertion needs the key 'type'", line)
    kind = check_str(entry["type"], ctx.at("type"), line_of(entry, "type"), raw_of(entry, "type"))
    if kind not in FAMILIES:
        raise ctx.at("type").error(unknown_name("assertion type", kind, FAMILIES),
                                   line_of(entry, "type"))
    keys = FAMILIES[kind].keys
    if env.assay and kind == "tool_blocklist":
        keys = keys + ASSAY_BLOCKLIST_FIXTURE_KEYS
    if env.assay and kind == "sequence_valid" and any(k in entry for k in
                                                      ASSAY_SEQUENCE_FIXTURE_KEYS):
        raise ctx.error("Assay's sequence_valid fixture (test_trace_raw + policy) is not "
                        "supported; give `rules` to check recorded runs instead", line)
    f = Fields(entry, ctx, ("type", "id", *keys), f"a {kind} assertion", line)
    ident = f.string("id", f"{kind}[{index}]") or ""
    if not ident:
        raise f.err("id", "an assertion id must not be empty")
    if ident in taken:
        raise f.err("id" if f.has("id") else "type",
                    f"assertion id {ident!r} is already a result id of this case; give a "
                    "unique `id`")
    taken.add(ident)
    return FAMILIES[kind].read(f, ident, kind, env)


__all__ = ["ASSERTION_KEYS", "FAMILIES", "Family", "Query", "json_key",
           "queries", "read_assertion", "read_assertions", "tables"]
