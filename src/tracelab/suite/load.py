"""Loading a suite file into the typed model (docs/suites.md §1, §2, §3, §4, §7).

`load_suite` reads the file, tells the three suite kinds apart by shape
(tracelab, the agent-runtime harness's JSON, Assay's eval.yaml), validates
everything and returns an immutable `Suite`. It refuses what is malformed; it
does not refuse what is merely ineffective or contradictory; that is
`lint_suite`'s job, so `check --allow-ineffective` can still run such a suite.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tracelab.documents import Document, read_document
from tracelab.suite import foreign
from tracelab.suite._parse import Env, case_context, check_cases, read_select
from tracelab.suite.expect import EXPECT_KEYS, expect_result_ids, merge_expect, read_expect_values
from tracelab.suite.families import read_assertions
from tracelab.suite.model import EFFECTS, Case, Effect, Suite
from tracelab.suite.typed_fields import Ctx, Fields, describe
from tracelab.suite.where import SqlChecker

TOP_KEYS = ("suite", "agent", "min_cases", "tools", "defaults", "cases")
CASE_KEYS = ("id", "category", "select", "min_pass_rate", "allow_no_runs", "expect", "assertions")
_SAME = {key: key for key in EXPECT_KEYS}


def load_suite(path: str | os.PathLike[str]) -> Suite:
    """Load and validate a suite file (tracelab YAML/JSON, harness JSON, or Assay eval.yaml).

    Raises:
        SuiteError: a one-line message naming the file, line, case and key.
    """
    path = Path(path)
    doc = read_document(path)
    ctx = Ctx(str(path))
    if not isinstance(doc.data, Mapping):
        raise ctx.error(f"a suite must be a mapping at the top level, got {describe(doc.data)}")
    with SqlChecker() as sql:
        env = Env(folder=path.parent, sql=sql)
        kind = foreign.suite_kind(doc)
        if kind == "harness":
            return foreign.harness_suite(doc, ctx, env)
        if kind == "assay":
            return foreign.assay_suite(doc, ctx, env)
        return _tracelab_suite(doc, ctx, env)


def _tracelab_suite(doc: Document, ctx: Ctx, env: Env) -> Suite:
    top = Fields(doc.data, ctx, TOP_KEYS, "the suite")
    name = _suite_name(top)
    min_cases = top.integer("min_cases", 5, minimum=0)
    defaults = _defaults(top)
    top.require("cases")
    cases = tuple(_case(item, index, ctx, line, defaults, env)
                  for index, (item, _, line, _) in enumerate(top.items("cases")))
    check_cases(cases, min_cases, top)
    return Suite(name=name, path=doc.path, sha256=doc.sha256, kind="tracelab", cases=cases,
                 tools=_tool_effects(top), min_cases=min_cases)


def _suite_name(top: Fields) -> str:
    if top.has("suite") and top.has("agent"):
        raise top.err("agent", "give `suite` or its synonym `agent`, not both")
    key = "agent" if top.has("agent") else "suite"
    if not top.has(key):
        raise top.ctx.error("a suite needs the key 'suite' (its name; `agent` is a synonym)",
                            top.own_line)
    name = top.string(key)
    if not name:
        raise top.err(key, "the suite name must not be empty")
    return name


def _defaults(top: Fields) -> dict[str, Any]:
    if not top.has("defaults") or top.get("defaults") is None:
        return {}
    return read_expect_values(top.sub("defaults", EXPECT_KEYS, "defaults"), _SAME)


def _tool_effects(top: Fields) -> tuple[tuple[str, Effect], ...]:
    if not top.has("tools") or top.get("tools") is None:
        return ()
    tools = top.get("tools")
    if not isinstance(tools, Mapping):
        raise top.err("tools", f"expected a mapping of tool name or glob: read|write, got "
                               f"{describe(tools)}")
    f = Fields(tools, top.ctx.at("tools"), tuple(k for k in tools if isinstance(k, str)),
               "tools", top.line("tools"))
    effects: list[tuple[str, Effect]] = []
    for name in f.keys():
        effect = f.need_string(name)
        if effect not in EFFECTS:
            raise f.err(name, f"an effect is read or write, got {effect!r}")
        effects.append((name, EFFECTS[EFFECTS.index(effect)]))
    return tuple(effects)


def _case(item: Any, index: int, ctx: Ctx, line: int | None, defaults: Mapping[str, Any],
          env: Env) -> Case:
    case_id, case_ctx = case_context(item, ctx.at("cases").at(index), line, "a case")
    f = Fields(item, case_ctx, CASE_KEYS, "a case", line)
    own: dict[str, Any] = {}
    if f.has("expect") and f.get("expect") is not None:
        own = read_expect_values(f.sub("expect", EXPECT_KEYS, "expect"), _SAME)
    expect = merge_expect(defaults, own)
    if not expect.must_not_leak:
        raise f.ctx.error(
            "no must_not_leak: every case must name strings that may never appear (in its "
            "`expect` or in `defaults`)", line)
    min_pass_rate = f.number("min_pass_rate", 1.0)
    if not 0.0 <= min_pass_rate <= 1.0:
        raise f.err("min_pass_rate", f"must be between 0 and 1, got {min_pass_rate}")
    return Case(
        id=case_id,
        category=f.string("category"),
        select=read_select(f, env),
        min_pass_rate=min_pass_rate,
        allow_no_runs=f.boolean("allow_no_runs", False),
        expect=expect,
        assertions=read_assertions(f, env, expect_result_ids(expect)),
        line=line,
    )
