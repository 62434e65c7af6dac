"""The suite vocabulary shared by every suite kind: expect, select, assertions, rules, matchers.

Each reader takes a `Fields`/value plus an `Env` and returns model objects, or
raises a SuiteError naming file, line, case and key.
"""
from __future__ import annotations

import difflib
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any, get_args

from tracelab.ingest import STEP_KEYS
from tracelab.suite._fields import Ctx, Fields, check_str, describe
from tracelab.suite._source import line_of, raw_of, read_document
from tracelab.suite.model import (
    AfterRule,
    ArgsValid,
    Assertion,
    BeforeRule,
    BlocklistRule,
    Case,
    EventuallyRule,
    Expect,
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
    Select,
    SequenceRule,
    SequenceValid,
    Status,
    ToolBlocklist,
    ToolMatcher,
    ToolSequence,
    ToolStatus,
)
from tracelab.suite.schemas import SchemaRefused, schema_validator
from tracelab.suite.where import SqlChecker

STATUSES: tuple[str, ...] = get_args(Status)
STEP_KINDS = tuple(STEP_KEYS)

EXPECT_LISTS = ("tools_called", "must_mention", "must_not_leak", "confirmations_raised",
                "writes", "writes_allowed", "must_not_write")
"""List keys of `expect`; every one but writes_allowed yields `<key>[<i>]` results."""
EXPECT_KEYS = ("termination", *EXPECT_LISTS, "max_steps")
ALWAYS_RESULT_IDS = ("termination", "max_steps", "undeclared_writes")

ASSERTION_KEYS: dict[str, tuple[str, ...]] = {
    "trace_must_call_tool": ("tool", "min_calls", "max_calls"),
    "trace_must_not_call_tool": ("tool",),
    "trace_tool_sequence": ("sequence", "allow_other_tools"),
    "trace_max_steps": ("max", "kinds"),
    "tool_blocklist": ("blocked",),
    "args_valid": ("tool", "schema", "test_args", "policy", "expect"),
    "tool_status": ("tool", "allow"),
    "output_contains": ("value", "ignore_case"),
    "output_not_contains": ("value", "ignore_case"),
    "output_matches": ("pattern",),
    "output_not_matches": ("pattern",),
    "sequence_valid": ("rules",),
    "retrieval_reports_omissions": (),
    "retrieval_excludes_superseded": (),
    "retrieval_top": ("ids", "k"),
    "retrieval_excludes": ("content_contains",),
    "retrieval_within_budget": (),
}
FIXTURE_KEYS = ("test_args", "policy", "expect")
ASSAY_BLOCKLIST_FIXTURE_KEYS = ("test_tool_calls", "policy", "expect")
ASSAY_SEQUENCE_FIXTURE_KEYS = ("test_trace", "test_trace_raw", "policy", "expect")

RULE_KEYS: dict[str, tuple[str, ...]] = {
    "require": ("tool",),
    "before": ("first", "then"),
    "after": ("trigger", "then", "within"),
    "never_after": ("trigger", "forbidden"),
    "eventually": ("tool", "within"),
    "max_calls": ("tool", "max"),
    "sequence": ("tools", "strict"),
    "blocklist": ("pattern",),
}
_OPTIONAL_RULE_KEYS = {"within": "after", "strict": "sequence"}


@dataclass(frozen=True)
class Env:
    """What readers need beyond the value: the suite's folder, DuckDB checks, the suite kind."""

    folder: Path
    """The folder of the suite file; `$file` references must stay inside it."""
    sql: SqlChecker
    assay: bool = False
    """Assay's meanings: `tool_blocklist` names exact tools, Assay's fixture forms are read."""


# --- generic values ----------------------------------------------------------------------


def to_json(value: Any, ctx: Ctx, line: int | None) -> Any:
    """A plain JSON value (dicts, lists, str, numbers, bools, None) or a SuiteError."""
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise ctx.error(f"JSON object keys must be strings, got {describe(key)}", line)
            out[key] = to_json(item, ctx.at(key), line_of(value, key) or line)
        return out
    if isinstance(value, list):
        return [to_json(item, ctx.at(i), line_of(value, i) or line) for i, item in enumerate(value)]
    if isinstance(value, float) and not math.isfinite(value):
        raise ctx.error(f"not a JSON value: {value}", line)
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise ctx.error(f"not a JSON value: {describe(value)}", line)


def resolve_file(ref: Any, ctx: Ctx, line: int | None, env: Env) -> Any:
    """The parsed content of a `$file` reference, refused when it could leave the suite's folder."""
    ref = check_str(ref, ctx, line)
    if not ref:
        raise ctx.error("an empty path", line)
    if PurePosixPath(ref).is_absolute() or PureWindowsPath(ref).is_absolute() or re.match(
        r"^[A-Za-z]:", ref
    ):
        raise ctx.error(f"path {ref!r} is absolute; give a path relative to the suite's folder",
                        line)
    if ".." in ref.replace("\\", "/").split("/"):
        raise ctx.error(f"path {ref!r} contains '..'; keep referenced files inside the suite's "
                        "folder", line)
    if "\0" in ref:
        raise ctx.error("the path holds a NUL character", line)
    folder = env.folder.resolve()
    try:
        target = (folder / ref).resolve()
    except (OSError, RuntimeError):  # a symlink loop (RuntimeError before Python 3.13)
        raise ctx.error(f"path {ref!r} cannot be resolved (a symlink loop?)", line) from None
    if not target.is_relative_to(folder):
        raise ctx.error(f"path {ref!r} resolves outside the suite's folder (to {target})", line)
    if not target.is_file():
        raise ctx.error(f"path {ref!r} does not exist (looked for {target})", line)
    return read_document(target, shown=f"{ctx.path} -> {ref}").data


def read_schema(value: Any, ctx: Ctx, line: int | None, env: Env) -> Any:
    """A JSON Schema (inline or `{$file: path}`), compiled once to prove it is valid."""
    if isinstance(value, Mapping) and "$file" in value:
        if len(value) != 1:
            raise ctx.error("a {$file: path} reference takes no other keys", line)
        value = resolve_file(value["$file"], ctx.at("$file"), line_of(value, "$file"), env)
    if not isinstance(value, (Mapping, bool)):
        raise ctx.error(f"a schema must be a mapping, true/false or {{$file: path}}, got "
                        f"{describe(value)}", line)
    schema = to_json(value, ctx, line)
    try:
        schema_validator(schema)
    except SchemaRefused as exc:
        raise ctx.error(f"not a valid JSON Schema (draft 2020-12): {exc}", line) from None
    return schema


def check_pattern(pattern: str, ctx: Ctx, line: int | None, env: Env) -> str:
    """`pattern` when RE2 (in DuckDB) compiles it."""
    problem = env.sql.regex_problem(pattern)
    if problem:
        raise ctx.error(problem, line)
    return pattern


def dedupe(items: tuple[str, ...]) -> tuple[str, ...]:
    """The strings in order, keeping only the first of exactly equal ones."""
    return tuple(dict.fromkeys(items))


# --- matchers ----------------------------------------------------------------------------


def read_matcher(value: Any, ctx: Ctx, line: int | None, raw: str | None, env: Env
                 ) -> ToolMatcher:
    """A tool matcher: a name, or {tool, args_match: {ARG: RE2}, status: [...]}."""
    if not isinstance(value, Mapping):
        return ToolMatcher(tool=check_str(value, ctx, line, raw))
    f = Fields(value, ctx, ("tool", "args_match", "status"), "a tool matcher", line)
    f.require("tool")
    args_match: tuple[tuple[str, str], ...] = ()
    if f.has("args_match"):
        patterns = f.get("args_match")
        if not isinstance(patterns, Mapping):
            raise f.err("args_match", f"expected a mapping of ARG: pattern, got "
                                      f"{describe(patterns)}")
        pairs = []
        for arg, pattern in patterns.items():
            arg_ctx = ctx.at("args_match").at(str(arg))
            arg_line = line_of(patterns, arg)
            check_str(arg, arg_ctx, arg_line)
            pattern = check_str(pattern, arg_ctx, arg_line, raw_of(patterns, arg))
            pairs.append((arg, check_pattern(pattern, arg_ctx, arg_line, env)))
        args_match = tuple(pairs)
    return ToolMatcher(tool=f.string("tool"), args_match=args_match,
                       status=read_statuses(f, "status", allow_empty=False))


def read_matchers(f: Fields, key: str, env: Env) -> tuple[ToolMatcher, ...]:
    """A list of tool matchers at `key`."""
    return tuple(read_matcher(item, ctx, line, raw, env) for item, ctx, line, raw in f.items(key))


def read_statuses(f: Fields, key: str, allow_empty: bool) -> tuple[Status, ...] | None:
    """A list of call statuses (ok, error, denied, missing), or None when absent."""
    values = f.choices(key, STATUSES, "a call status")
    if values == () and not allow_empty:
        raise f.err(key, "an empty status list matches no call; list at least one status")
    return values  # type: ignore[return-value]


# --- select and expect -------------------------------------------------------------------


def read_select(f: Fields, env: Env) -> Select | None:
    """`select` of a case: None when absent or null; `{}` selects every run."""
    if not f.has("select") or f.get("select") is None:
        return None
    s = f.sub("select", ("case_id", "agent", "agent_version", "model", "tags", "where"),
              "select")
    where = s.string("where")
    if where is not None:
        problem = env.sql.where_problem(where)
        if problem:
            raise s.err("where", problem)
    return Select(case_id=s.string("case_id"), agent=s.string("agent"),
                  agent_version=s.string("agent_version"), model=s.string("model"),
                  tags=s.strings("tags") or (), where=where)


def read_expect_values(f: Fields, names: Mapping[str, str]) -> dict[str, Any]:
    """The present keys of an `expect` (or `defaults`) mapping, by model field name.

    `names` maps the file's key to the model field (identity for tracelab suites,
    camelCase for the harness), so messages name the key as written.
    """
    values: dict[str, Any] = {}
    for key in f.keys():
        field = names[key]
        if field == "termination":
            value = f.get(key)
            values[field] = (f.strings(key) if isinstance(value, list)
                             else (f.string(key),))
        elif field == "max_steps":
            values[field] = f.integer(key, minimum=0)
        else:
            values[field] = f.strings(key)
    return values


def merge_expect(defaults: Mapping[str, Any], own: Mapping[str, Any]) -> Expect:
    """§7: lists concatenated defaults-first without exact duplicates; scalars: the case wins."""
    fields: dict[str, Any] = {}
    for name in EXPECT_LISTS:
        fields[name] = dedupe((defaults.get(name) or ()) + (own.get(name) or ()))
    for name in ("termination", "max_steps"):
        fields[name] = own[name] if name in own else defaults.get(name)
    return Expect(**fields)


def expect_result_ids(expect: Expect) -> set[str]:
    """Every result id the `expect` of a case yields, plus the always-on ones."""
    ids = set(ALWAYS_RESULT_IDS)
    for name in EXPECT_LISTS:
        if name != "writes_allowed":
            ids.update(f"{name}[{i}]" for i in range(len(getattr(expect, name))))
    return ids


def case_context(item: Any, ctx: Ctx, line: int | None, what: str) -> tuple[str, Ctx]:
    """The id of a case (or test) and the context naming it; `ctx` points at the list item."""
    if not isinstance(item, Mapping):
        raise ctx.error(f"{what} must be a mapping, got {describe(item)}", line)
    if "id" not in item:
        raise ctx.error(f"{what} needs the key 'id'", line)
    case_id = check_str(item["id"], ctx.at("id"), line_of(item, "id") or line, raw_of(item, "id"))
    if not case_id:
        raise ctx.at("id").error("a case id must not be empty", line_of(item, "id") or line)
    return case_id, ctx.in_case(case_id)


def check_cases(cases: tuple[Case, ...], min_cases: int, top: Fields) -> None:
    """Refuse duplicate case ids and fewer than `min_cases` cases."""
    seen: dict[str, int | None] = {}
    for case in cases:
        if case.id in seen:
            first = f" (first at line {seen[case.id]})" if seen[case.id] else ""
            raise top.ctx.in_case(case.id).error(f"duplicate case id{first}; ids must be unique",
                                                 case.line)
        seen[case.id] = case.line
    if len(cases) < min_cases:
        raise top.ctx.at("cases").error(
            f"{len(cases)} case(s), fewer than min_cases ({min_cases}): that is an example, "
            "not a suite; add cases or lower `min_cases`", top.line("cases"))


# --- assertions --------------------------------------------------------------------------


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
    """One typed assertion (suite.md §3), or None for a fixture checked at load."""
    if not isinstance(entry, Mapping):
        raise ctx.error(f"an assertion must be a mapping with a `type`, got {describe(entry)}",
                        line)
    if "type" not in entry:
        raise ctx.error("an assertion needs the key 'type'", line)
    kind = check_str(entry["type"], ctx.at("type"), line_of(entry, "type"), raw_of(entry, "type"))
    if kind not in ASSERTION_KEYS:
        raise ctx.at("type").error(_unknown_name("assertion type", kind, ASSERTION_KEYS),
                                   line_of(entry, "type"))
    keys = ASSERTION_KEYS[kind]
    if env.assay and kind == "tool_blocklist":
        keys = keys + ASSAY_BLOCKLIST_FIXTURE_KEYS
    if env.assay and kind == "sequence_valid" and any(k in entry for k in
                                                      ASSAY_SEQUENCE_FIXTURE_KEYS):
        raise ctx.error("Assay's sequence_valid fixture (test_trace_raw + policy) is not "
                        "supported; give `rules` to check recorded runs instead", line)
    f = Fields(entry, ctx, ("type", "id", *keys), f"a {kind} assertion", line)
    ident = f.string("id", f"{kind}[{index}]")
    if not ident:
        raise f.err("id", "an assertion id must not be empty")
    if ident in taken:
        raise f.err("id" if f.has("id") else "type",
                    f"assertion id {ident!r} is already a result id of this case; give a "
                    "unique `id`")
    taken.add(ident)
    return _READERS[kind](f, ident, kind, env)


def _unknown_name(what: str, name: str, known: Mapping[str, Any] | tuple[str, ...]) -> str:
    close = difflib.get_close_matches(name, list(known), n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"unknown {what} {name!r}{hint} (known: {', '.join(known)})"


def _must_call(f: Fields, ident: str, kind: str, env: Env) -> Assertion:
    f.require("tool")
    return MustCallTool(id=ident, type=kind, matcher=_matcher_at(f, "tool", env),
                        min_calls=f.integer("min_calls", 1, minimum=0),
                        max_calls=f.integer("max_calls", minimum=0))


def _must_not_call(f: Fields, ident: str, kind: str, env: Env) -> Assertion:
    f.require("tool")
    return MustNotCallTool(id=ident, type=kind, matcher=_matcher_at(f, "tool", env))


def _tool_sequence(f: Fields, ident: str, kind: str, env: Env) -> Assertion:
    f.require("sequence", "allow_other_tools")
    return ToolSequence(id=ident, type=kind, sequence=read_matchers(f, "sequence", env),
                        allow_other_tools=f.boolean("allow_other_tools"))


def _max_steps(f: Fields, ident: str, kind: str, env: Env) -> Assertion:
    f.require("max")
    return MaxSteps(id=ident, type=kind, max=f.integer("max", minimum=0),
                    kinds=f.choices("kinds", STEP_KINDS, "a step kind"))


def _blocklist(f: Fields, ident: str, kind: str, env: Env) -> Assertion | None:
    if env.assay and any(f.has(k) for k in ASSAY_BLOCKLIST_FIXTURE_KEYS):
        _assay_blocklist_fixture(f)
        return None
    f.require("blocked")
    return ToolBlocklist(id=ident, type=kind, blocked=f.strings("blocked"), exact=env.assay)


def _assay_blocklist_fixture(f: Fields) -> None:
    """Assay's tool_blocklist fixture: `test_tool_calls` against `policy.blocked`, at load."""
    if f.has("blocked"):
        raise f.err("blocked", "give either `blocked` or the fixture keys "
                               "(test_tool_calls, policy, expect), not both")
    f.require("policy")
    policy = f.sub("policy", ("blocked",), "a tool_blocklist policy")
    policy.require("blocked")
    blocked = set(policy.strings("blocked"))
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


def _args_valid(f: Fields, ident: str, kind: str, env: Env) -> Assertion | None:
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
        if value != "from_definitions":
            raise f.err("schema", f"expected a schema, {{$file: path}} or 'from_definitions', "
                                  f"got {value!r}")
        schema: Any = value
    else:
        schema = read_schema(value, f.ctx.at("schema"), f.line("schema"), env)
    return ArgsValid(id=ident, type=kind, tool=tool, schema=schema)


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


def _tool_status(f: Fields, ident: str, kind: str, env: Env) -> Assertion:
    f.require("tool")
    allow = read_statuses(f, "allow", allow_empty=True)
    return ToolStatus(id=ident, type=kind, tool=f.string("tool"),
                      allow=("ok",) if allow is None else allow)


def _output_contains(f: Fields, ident: str, kind: str, env: Env) -> Assertion:
    f.require("value")
    return OutputContains(id=ident, type=kind, value=f.string("value"),
                          ignore_case=f.boolean("ignore_case", False),
                          negate=kind == "output_not_contains")


def _output_matches(f: Fields, ident: str, kind: str, env: Env) -> Assertion:
    f.require("pattern")
    pattern = check_pattern(f.string("pattern"), f.ctx.at("pattern"), f.line("pattern"), env)
    return OutputMatches(id=ident, type=kind, pattern=pattern,
                         negate=kind == "output_not_matches")


def _sequence_valid(f: Fields, ident: str, kind: str, env: Env) -> Assertion:
    f.require("rules")
    rules = tuple(read_rule(item, ctx, line, env) for item, ctx, line, _ in f.items("rules"))
    return SequenceValid(id=ident, type=kind, rules=rules)


def _retrieval(f: Fields, ident: str, kind: str, env: Env) -> Assertion:
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


_READERS = {
    "trace_must_call_tool": _must_call,
    "trace_must_not_call_tool": _must_not_call,
    "trace_tool_sequence": _tool_sequence,
    "trace_max_steps": _max_steps,
    "tool_blocklist": _blocklist,
    "args_valid": _args_valid,
    "tool_status": _tool_status,
    "output_contains": _output_contains,
    "output_not_contains": _output_contains,
    "output_matches": _output_matches,
    "output_not_matches": _output_matches,
    "sequence_valid": _sequence_valid,
    "retrieval_reports_omissions": _retrieval,
    "retrieval_excludes_superseded": _retrieval,
    "retrieval_top": _retrieval,
    "retrieval_excludes": _retrieval,
    "retrieval_within_budget": _retrieval,
}


def _matcher_at(f: Fields, key: str, env: Env) -> ToolMatcher:
    return read_matcher(f.get(key), f.ctx.at(key), f.line(key), raw_of(f.data, key), env)


# --- sequence rules ----------------------------------------------------------------------


def read_rule(entry: Any, ctx: Ctx, line: int | None, env: Env) -> Rule:
    """One rule of `sequence_valid` (suite.md §4)."""
    if not isinstance(entry, Mapping) or "type" not in entry:
        raise ctx.error("a rule must be a mapping with a `type` naming the rule", line)
    kind = check_str(entry["type"], ctx.at("type"), line_of(entry, "type"), raw_of(entry, "type"))
    if kind not in RULE_KEYS:
        raise ctx.at("type").error(_unknown_name("rule type", kind, RULE_KEYS),
                                   line_of(entry, "type"))
    keys = RULE_KEYS[kind]
    f = Fields(entry, ctx, ("type", *keys), f"a {kind} rule", line)
    f.require(*(k for k in keys if _OPTIONAL_RULE_KEYS.get(k) != kind))

    def m(key: str) -> ToolMatcher:
        return _matcher_at(f, key, env)

    if kind == "require":
        return RequireRule(type=kind, tool=m("tool"))
    if kind == "before":
        return BeforeRule(type=kind, first=m("first"), then=m("then"))
    if kind == "after":
        return AfterRule(type=kind, trigger=m("trigger"), then=m("then"),
                         within=f.integer("within", 1))
    if kind == "never_after":
        return NeverAfterRule(type=kind, trigger=m("trigger"), forbidden=m("forbidden"))
    if kind == "eventually":
        return EventuallyRule(type=kind, tool=m("tool"), within=f.integer("within"))
    if kind == "max_calls":
        return MaxCallsRule(type=kind, tool=m("tool"), max=f.integer("max", minimum=0))
    if kind == "sequence":
        return SequenceRule(type=kind, tools=read_matchers(f, "tools", env),
                            strict=f.boolean("strict", False))
    return BlocklistRule(type=kind, pattern=f.string("pattern"))
