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

from tracelab.documents import line_of, raw_of, read_document
from tracelab.suite.model import Case, Select, Status, ToolMatcher
from tracelab.suite.schemas import SchemaRefused, schema_validator
from tracelab.suite.typed_fields import Ctx, Fields, check_str, describe
from tracelab.suite.where import SqlChecker

STATUSES: tuple[Status, ...] = get_args(Status)

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


def unknown_name(what: str, name: str, known: Mapping[str, Any] | tuple[str, ...]) -> str:
    """An unknown name's message, with the closest known one as a hint."""
    close = difflib.get_close_matches(name, list(known), n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"unknown {what} {name!r}{hint} (known: {', '.join(known)})"


# --- matchers ----------------------------------------------------------------------------


def read_matcher(value: Any, ctx: Ctx, line: int | None, raw: str | None, env: Env,
                 nested: bool = False) -> ToolMatcher:
    """A tool matcher: a name; {tool or tool_glob, args_match: {ARG: RE2 or [RE2, ...]},
    status: [...]}; or {any_of: [matcher, ...]} (docs/suites.md §3, §8). `nested`: inside an any_of."""
    if not isinstance(value, Mapping):
        return ToolMatcher(tool=check_str(value, ctx, line, raw))
    if "any_of" in value:
        return _read_any_of(value, ctx, line, env, nested)
    f = Fields(value, ctx, ("tool", "tool_glob", "args_match", "status"), "a tool matcher", line)
    if f.has("tool") and f.has("tool_glob"):
        raise f.err("tool_glob", "give either `tool` (a name) or `tool_glob` (a glob), not both")
    if not f.has("tool_glob"):
        f.require("tool")
    return ToolMatcher(tool=f.string("tool"), tool_glob=f.string("tool_glob"),
                       args_match=_read_args_match(f, env),
                       status=read_statuses(f, "status", allow_empty=False))


def _read_any_of(value: Mapping[str, Any], ctx: Ctx, line: int | None, env: Env,
                 nested: bool) -> ToolMatcher:
    f = Fields(value, ctx, ("any_of",), "an any_of matcher", line)
    if nested:
        raise f.err("any_of", "any_of cannot be nested; list every matcher in the outer any_of")
    branches = tuple(read_matcher(item, item_ctx, item_line, item_raw, env, nested=True)
                     for item, item_ctx, item_line, item_raw in f.items("any_of"))
    if not branches:
        raise f.err("any_of", "an empty any_of matches no call; list at least one matcher")
    return ToolMatcher(any_of=branches)


def _read_args_match(f: Fields, env: Env) -> tuple[tuple[str, str], ...]:
    """(ARG, pattern) pairs; an ARG given a list of patterns yields one pair per pattern."""
    if not f.has("args_match"):
        return ()
    patterns = f.get("args_match")
    if not isinstance(patterns, Mapping):
        raise f.err("args_match", f"expected a mapping of ARG: pattern, got "
                                  f"{describe(patterns)}")
    pairs = []
    for arg, given in patterns.items():
        arg_ctx = f.ctx.at("args_match").at(str(arg))
        arg_line = line_of(patterns, arg)
        check_str(arg, arg_ctx, arg_line)
        if isinstance(given, list):
            if not given:
                raise arg_ctx.error("an empty pattern list; give at least one pattern", arg_line)
            items = [(pattern, arg_ctx.at(i), line_of(given, i) or arg_line, raw_of(given, i))
                     for i, pattern in enumerate(given)]
        else:
            items = [(given, arg_ctx, arg_line, raw_of(patterns, arg))]
        for pattern, item_ctx, item_line, item_raw in items:
            text = check_str(pattern, item_ctx, item_line, item_raw)
            pairs.append((arg, check_pattern(text, item_ctx, item_line, env)))
    return tuple(pairs)


def read_matchers(f: Fields, key: str, env: Env) -> tuple[ToolMatcher, ...]:
    """A list of tool matchers at `key`."""
    return tuple(read_matcher(item, ctx, line, raw, env) for item, ctx, line, raw in f.items(key))


def read_statuses(f: Fields, key: str, allow_empty: bool) -> tuple[Status, ...] | None:
    """A list of call statuses (ok, error, denied, missing), or None when absent."""
    values = f.choices(key, STATUSES, "a call status")
    if values == () and not allow_empty:
        raise f.err(key, "an empty status list matches no call; list at least one status")
    return values


# --- select and cases -------------------------------------------------------------------


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


def matcher_at(f: Fields, key: str, env: Env) -> ToolMatcher:
    """The tool matcher at `key` of `f`."""
    return read_matcher(f.get(key), f.ctx.at(key), f.line(key), raw_of(f.data, key), env)
