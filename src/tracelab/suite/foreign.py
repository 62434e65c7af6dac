"""Suites of other tools, loaded unchanged: the agent-runtime harness's JSON and Assay's eval.yaml.

Told apart by shape (docs/suites.md §7); docs/suites.md documents each mapping.

- Harness: JSON with top-level `cases` whose `expect` keys are camelCase (or
  whose cases carry `input`/`principal`). camelCase keys map onto §2; tracelab's
  own rules apply (`mustNotLeak` on every case, at least 5 cases).
- Assay: top-level `tests`. Each test becomes a case selecting runs whose
  `case_id` is the test id. Its deterministic metrics (given as `metric:` or as
  `expected: {type: ...}`) map onto §3 assertions with Assay's meanings; its
  `assertions:` list is read as §3. A metric that needs a model is refused by
  name. Exempt from `must_not_leak` and `min_cases`.
"""
from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from tracelab.documents import Document, line_of, raw_of
from tracelab.suite._parse import (
    Env,
    case_context,
    check_cases,
    check_pattern,
    read_schema,
    resolve_file,
)
from tracelab.suite.expect import expect_result_ids, merge_expect, read_expect_values
from tracelab.suite.families import read_assertions
from tracelab.suite.model import (
    ArgsValid,
    Assertion,
    Case,
    Expect,
    OutputContains,
    OutputMatches,
    Rule,
    SequenceValid,
    Suite,
    SuiteKind,
    ToolBlocklist,
    ToolMatcher,
    ToolSequence,
)
from tracelab.suite.rules import read_rule
from tracelab.suite.typed_fields import Ctx, Fields, check_str, describe

_CAMEL = re.compile(r"[a-z][A-Z]")
Built = tuple[str, Callable[[str, str], Assertion]]
"""(assertion type, make(id, type)): one §3 assertion an Assay metric stands for."""


def suite_kind(doc: Document) -> SuiteKind:
    """Which loader reads `doc`: 'assay', 'harness' or 'tracelab' (docs/suites.md §7)."""
    data = doc.data
    if "tests" in data and "cases" not in data:
        return "assay"
    cases = data.get("cases")
    if doc.is_json and isinstance(cases, list) and any(_harness_case(c) for c in cases):
        return "harness"
    return "tracelab"


def _harness_case(case: Any) -> bool:
    if not isinstance(case, Mapping):
        return False
    expect = case.get("expect")
    camel = isinstance(expect, Mapping) and any(
        isinstance(k, str) and _CAMEL.search(k) for k in expect)
    return camel or "input" in case or "principal" in case


# --- the agent-runtime harness ------------------------------------------------------------

HARNESS_EXPECT = {
    "termination": "termination",
    "toolsCalled": "tools_called",
    "mustMention": "must_mention",
    "mustNotLeak": "must_not_leak",
    "confirmationsRaised": "confirmations_raised",
    "mustNotWrite": "must_not_write",
    "writes": "writes",
    "maxSteps": "max_steps",
}
HARNESS_MIN_CASES = 5


def harness_suite(doc: Document, ctx: Ctx, env: Env) -> Suite:
    """The harness's JSON eval suite as a Suite (selection by case id, else by input)."""
    ctx = dataclasses.replace(ctx, note=" [read as an agent-runtime harness suite: JSON "
                                        "with camelCase expect keys]")
    top = Fields(doc.data, ctx, ("agent", "cases"), "the harness suite")
    top.require("agent", "cases")
    name = top.string("agent")
    if not name:
        raise top.err("agent", "the suite name must not be empty")
    cases = tuple(_harness_case_model(item, index, ctx, line)
                  for index, (item, _, line, _) in enumerate(top.items("cases")))
    check_cases(cases, HARNESS_MIN_CASES, top)
    return Suite(name=name, path=doc.path, sha256=doc.sha256, kind="harness", cases=cases,
                 min_cases=HARNESS_MIN_CASES)


def _harness_case_model(item: Any, index: int, ctx: Ctx, line: int | None) -> Case:
    keys = ("id", "input", "principal", "expect")
    case_id, case_ctx = case_context(item, ctx.at("cases").at(index), line, "a harness case")
    f = Fields(item, case_ctx, keys, "a harness case", line)
    f.require("expect")
    expect = merge_expect({}, read_expect_values(
        f.sub("expect", tuple(HARNESS_EXPECT), "expect"), HARNESS_EXPECT))
    if not expect.must_not_leak:
        raise f.ctx.at("expect").error(
            "no mustNotLeak: every case must name strings that may never appear", f.line("expect"))
    text = None if f.get("input") is None else f.string("input")
    return Case(id=case_id, input=text, expect=expect, line=line)


# --- Assay's eval.yaml --------------------------------------------------------------------

ASSAY_TOP = ("version", "configVersion", "suite", "model", "settings", "thresholds", "otel",
             "output", "tests")
ASSAY_TEST = ("id", "input", "expected", "assertions", "on_error", "tags", "metadata", "metric")
METRIC_KEYS: dict[str, tuple[str, ...]] = {
    "must_contain": ("must_contain",),
    "must_not_contain": ("must_not_contain",),
    "regex_match": ("pattern", "flags"),
    "regex_not_match": ("pattern", "flags"),
    "tool_blocklist": ("blocked", "blocklist"),
    "sequence_valid": ("rules", "sequence", "policy"),
    "args_valid": ("schema", "policy"),
}
MODEL_METRICS = {
    "semantic_similarity_to": "compares embeddings of the answer with a reference",
    "semantic_similarity": "compares embeddings of the answer with a reference",
    "judge_criteria": "asks an LLM judge",
    "faithfulness": "asks an LLM judge whether the answer is grounded in its context",
    "relevance": "asks an LLM judge whether the answer is relevant",
}
UNSUPPORTED_METRICS = {
    "json_schema": "validates the final answer against a JSON Schema; tracelab has no "
                   "such assertion",
}
REGEX_FLAGS = {"i": "i", "m": "m", "s": "s"}
_POLICY_SEQUENCE_KEYS = ("version", "name", "metadata", "tools", "sequences", "aliases",
                         "on_error")
_POLICY_ARGS_KEYS = ("version", "name", "metadata", "schemas")
_STRUCTURED_POLICY = ("version", "name", "tools", "allow", "deny", "schemas", "constraints",
                      "enforcement", "limits", "signatures", "tool_pins", "discovery",
                      "runtime_monitor", "kill_switch")
"""Keys that make Assay read an args policy file as a structured policy, not a schema map."""


def assay_suite(doc: Document, ctx: Ctx, env: Env) -> Suite:
    """Assay's eval.yaml as a Suite: one case per test, metrics mapped onto §3."""
    ctx = dataclasses.replace(ctx, note=" [read as an Assay eval.yaml: it has top-level `tests`]")
    env = dataclasses.replace(env, assay=True)
    top = Fields(doc.data, ctx, ASSAY_TOP, "an Assay eval.yaml")
    name = top.string("suite") or doc.path.stem
    tests = list(top.items("tests"))
    if not tests:
        raise top.err("tests", "no tests: an empty suite checks nothing")
    cases = tuple(_assay_case(item, index, ctx, line, env)
                  for index, (item, _, line, _) in enumerate(tests))
    check_cases(cases, 0, top)
    return Suite(name=name, path=doc.path, sha256=doc.sha256, kind="assay", cases=cases,
                 min_cases=0)


def _assay_case(item: Any, index: int, ctx: Ctx, line: int | None, env: Env) -> Case:
    case_id, tctx = case_context(item, ctx.at("tests").at(index), line, "an Assay test")
    metric = None
    if "metric" in item:
        metric = _metric_name(item["metric"], tctx.at("metric"), line_of(item, "metric"),
                              raw_of(item, "metric"))
    f = Fields(item, tctx, ASSAY_TEST + (METRIC_KEYS[metric] if metric else ()), "an Assay test",
               line)
    taken = set(expect_result_ids(Expect()))
    assertions: list[Assertion] = []
    if metric:
        assertions += _metric_assertions(metric, f, env, taken)
    if f.has("expected") and f.get("expected") is not None:
        assertions += _expected_assertions(f, env, taken)
    assertions += read_assertions(f, env, taken)
    return Case(id=case_id, assertions=tuple(assertions), line=line)


def _metric_name(value: Any, ctx: Ctx, line: int | None, raw: str | None) -> str:
    name = check_str(value, ctx, line, raw)
    if name in MODEL_METRICS:
        raise ctx.error(f"metric {name!r} needs a model (it {MODEL_METRICS[name]}); tracelab "
                        "checks recorded runs and never calls a model, so it is refused, not "
                        "skipped", line)
    if name in UNSUPPORTED_METRICS:
        raise ctx.error(f"metric {name!r} {UNSUPPORTED_METRICS[name]}", line)
    if name not in METRIC_KEYS:
        raise ctx.error(f"unknown Assay metric {name!r} (supported: {', '.join(METRIC_KEYS)})",
                        line)
    return name


def _expected_assertions(f: Fields, env: Env, taken: set[str]) -> list[Assertion]:
    """Assay's `expected:` block: `{type: metric, ...}`, a legacy untagged one, or a list of one."""
    value, ctx, line = f.get("expected"), f.ctx.at("expected"), f.line("expected")
    if isinstance(value, list):
        if len(value) != 1:
            raise ctx.error(f"a list under `expected` must hold exactly one check, got "
                            f"{len(value)}; move the others to `assertions`", line)
        value, ctx, line = value[0], ctx.at(0), line_of(value, 0) or line
    if not isinstance(value, Mapping):
        raise ctx.error(f"expected a mapping with `type`, got {describe(value)}", line)
    if "type" in value:
        metric = _metric_name(value["type"], ctx.at("type"), line_of(value, "type"),
                              raw_of(value, "type"))
    elif len(value) == 1 and next(iter(value)) in ("must_contain", "must_not_contain"):
        metric = next(iter(value))
    else:
        raise ctx.error("`expected` needs a `type` naming the metric", line)
    block = Fields(value, ctx, ("type", *METRIC_KEYS[metric]), f"a {metric} check", line)
    return _metric_assertions(metric, block, env, taken)


def _metric_assertions(metric: str, f: Fields, env: Env, taken: set[str]) -> list[Assertion]:
    """The §3 assertions one Assay metric stands for; ids as docs/suites.md lists them."""
    built = _METRICS[metric](metric, f, env)
    ids = _metric_ids(metric, built)
    out = []
    for ident, (kind, make) in zip(ids, built, strict=True):
        if ident in taken:
            raise f.ctx.error(f"result id {ident!r} is given twice in this test (by `metric` and "
                              "`expected`?)", f.own_line)
        taken.add(ident)
        out.append(make(ident, kind))
    return out


def _metric_ids(metric: str, built: list[Built]) -> list[str]:
    if metric in ("must_contain", "must_not_contain", "args_valid"):
        return [f"{metric}[{i}]" for i in range(len(built))]
    if len(built) == 2:  # sequence_valid with both rules and an exact sequence
        return [metric, f"{metric}.sequence"]
    return [metric]


def _needles(metric: str, f: Fields, env: Env) -> list[Built]:
    f.require(metric)
    values = f.need_strings(metric) if isinstance(f.get(metric), list) else (f.need_string(metric),)
    if not values:
        raise f.err(metric, f"an empty {metric} list checks nothing")
    negate = metric == "must_not_contain"
    kind = "output_not_contains" if negate else "output_contains"
    return [(kind, partial(OutputContains, value=v, negate=negate)) for v in values]


def _regex(metric: str, f: Fields, env: Env) -> list[Built]:
    f.require("pattern")
    flags = f.strings("flags") or ()
    for index, flag in enumerate(flags):
        if flag not in REGEX_FLAGS:
            raise f.ctx.at("flags").at(index).error(
                f"unknown regex flag {flag!r} (Assay's flags: i, m, s)", f.line("flags"))
    prefix = f"(?{''.join(dict.fromkeys(flags))})" if flags else ""
    pattern = check_pattern(prefix + f.need_string("pattern"), f.ctx.at("pattern"),
                            f.line("pattern"), env)
    negate = metric == "regex_not_match"
    kind = "output_not_matches" if negate else "output_matches"
    return [(kind, lambda i, k: OutputMatches(id=i, type=k, pattern=pattern, negate=negate))]


def _tool_blocklist(metric: str, f: Fields, env: Env) -> list[Built]:
    if f.has("blocked") and f.has("blocklist"):
        raise f.err("blocklist", "give `blocked` or its synonym `blocklist`, not both")
    key = "blocklist" if f.has("blocklist") else "blocked"
    f.require(key)
    blocked = f.need_strings(key)
    return [("tool_blocklist",
             lambda i, k: ToolBlocklist(id=i, type=k, blocked=blocked, exact=True))]


def _sequence_valid(metric: str, f: Fields, env: Env) -> list[Built]:
    file_rules, file_sequence = _sequence_policy(f, env) if f.has("policy") else (None, None)
    rules = (tuple(read_rule(item, ctx, line, env) for item, ctx, line, _ in f.items("rules"))
             if f.has("rules") else file_rules)
    names = f.strings("sequence") if f.has("sequence") else file_sequence
    if rules is None and names is None:
        raise f.ctx.error("sequence_valid needs `rules`, `sequence` or `policy`", f.own_line)
    built: list[Built] = []
    if rules is not None:
        built.append(("sequence_valid", lambda i, k: SequenceValid(id=i, type=k, rules=rules)))
    if names is not None:
        sequence = tuple(ToolMatcher(tool=name) for name in names)
        built.append(("trace_tool_sequence", lambda i, k: ToolSequence(
            id=i, type=k, sequence=sequence, allow_other_tools=False)))
    return built


def _sequence_policy(f: Fields, env: Env
                     ) -> tuple[tuple[Rule, ...] | None, tuple[str, ...] | None]:
    """Assay's sequence policy file: a list of tool names, a list of rules, or {sequences}."""
    ctx, line = f.ctx.at("policy"), f.line("policy")
    data = resolve_file(f.get("policy"), ctx, line, env)
    if isinstance(data, list) and all(isinstance(item, str) for item in data):
        return None, tuple(data)
    if isinstance(data, Mapping):
        policy = Fields(data, ctx, _POLICY_SEQUENCE_KEYS, "an Assay sequence policy", line)
        if policy.get("aliases"):
            raise policy.err("aliases", "Assay's tool aliases are not supported; list the "
                                        "tools in each rule")
        policy.require("sequences")
        data = policy.get("sequences")
        ctx = ctx.at("sequences")
    if not isinstance(data, list):
        raise ctx.error(f"expected a list of tool names or of rules, got {describe(data)}", line)
    return tuple(read_rule(item, ctx.at(i), line_of(data, i) or line, env)
                 for i, item in enumerate(data)), None


def _args_valid(metric: str, f: Fields, env: Env) -> list[Built]:
    if f.has("schema"):
        schemas, ctx, line = f.get("schema"), f.ctx.at("schema"), f.line("schema")
    elif f.has("policy"):
        ctx, line = f.ctx.at("policy"), f.line("policy")
        schemas = resolve_file(f.get("policy"), ctx, line, env)
        if isinstance(schemas, Mapping) and any(k in schemas for k in _STRUCTURED_POLICY):
            policy = Fields(schemas, ctx, _POLICY_ARGS_KEYS, "an Assay args policy "
                            "(only `schemas` is supported)", line)
            policy.require("schemas")
            schemas, ctx = policy.get("schemas"), ctx.at("schemas")
    else:
        raise f.ctx.error("args_valid needs `schema` (tool: JSON Schema) or `policy` (a file)",
                          f.own_line)
    if not isinstance(schemas, Mapping) or not schemas:
        raise ctx.error(f"expected a non-empty mapping of tool name: JSON Schema, got "
                        f"{describe(schemas)}", line)
    built: list[Built] = []
    for tool, schema in schemas.items():
        tool = check_str(tool, ctx, line_of(schemas, tool) or line)
        compiled = read_schema(schema, ctx.at(tool), line_of(schemas, tool) or line, env)
        built.append(("args_valid", partial(ArgsValid, tool=tool, schema=compiled)))
    return built


_METRICS = {
    "must_contain": _needles,
    "must_not_contain": _needles,
    "regex_match": _regex,
    "regex_not_match": _regex,
    "tool_blocklist": _tool_blocklist,
    "sequence_valid": _sequence_valid,
    "args_valid": _args_valid,
}
