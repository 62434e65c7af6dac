"""A straightforward per-episode Python evaluator of a tracelab suite: the `check` benchmark's baseline.

This is how per-trace tools work: read the native JSON Lines file line by line,
parse each episode, rebuild what ingest would store (call/result pairing,
statuses, effects with the suite's overrides, the transcript), then loop over
the suite's cases and assertions and compute `passed` and `exercised` for every
(case, assertion, episode), exactly as suite.md §2-§5 and trace-format.md §2-§5
say. It shares nothing with the SQL engine but the suite loader, so its verdicts
are an independent cross-check of `tracelab check`.

Limits: `select.where` (an SQL predicate) and suites of other kinds than
tracelab's are refused; regex patterns are read by Python's `re`, which agrees
with RE2 only on simple patterns (the benchmark suite keeps to those); every
line is taken to be a valid episode with a unique id, as in a generated corpus
(no quarantine, no de-duplication).

    python benchmarks/pyeval.py SUITE CORPUS.jsonl --out verdicts.parquet
"""
from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema_rs
import orjson
import polars as pl

from tracelab.suite import (
    AfterRule,
    ArgsValid,
    Assertion,
    BeforeRule,
    BlocklistRule,
    Case,
    EventuallyRule,
    LatestBeforeRule,
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
    load_suite,
)

VERDICT_SCHEMA = {"case_id": pl.Utf8, "assertion_id": pl.Utf8, "episode_id": pl.Utf8,
                  "passed": pl.Boolean, "exercised": pl.Utf8}

Verdict = tuple[bool, str]
"""(passed, exercised); a failure is always exercised = yes."""
FAIL: Verdict = (False, "yes")
PASS: Verdict = (True, "yes")


# --------------------------------------------------------------------------- lower()


def _simple_lower_table() -> dict[int, str]:
    """Each code point's Unicode *simple* lowercase mapping, as DuckDB's lower() applies it.

    Python's str.lower() uses the full mapping (`İ` -> `i̇`, final sigma in context);
    per character, the one-to-one results are the simple mapping, and U+0130 is the
    only character whose full lowercase is longer while its simple one is `i`.
    """
    table = {}
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        ch = chr(cp)
        low = ch.lower()
        if low != ch and len(low) == 1:
            table[cp] = low
    table[0x130] = "i"
    return table


_LOWER = _simple_lower_table()


def lower(text: str) -> str:
    """`text` lowered code point by code point (trace-format §5)."""
    return text.lower() if text.isascii() else text.translate(_LOWER)


# --------------------------------------------------------------------------- one episode, as stored


@dataclass
class Call:
    """A `tool_calls` row: the call, its paired result's status, its effect after overrides."""

    name: str | None
    call_id: str
    args: Any
    """The parsed args; None when absent, null or unparseable."""
    unparseable: bool
    status: str = "missing"
    effect: str | None = None


@dataclass
class Definition:
    name: str
    effect: str | None
    parameters: Any


@dataclass
class Episode:
    """What the checks read of one episode."""

    raw: dict[str, Any]
    override: Callable[[str | None], str | None]
    """The suite's `tools:` effect overrides."""
    calls: list[Call]
    definitions: list[Definition]
    declared: bool
    steps: list[dict[str, Any]]
    transcript: str
    """Lowered fragments joined by NUL: a needle without NUL cannot span two fragments."""
    fragments: list[str] = field(default_factory=list)

    @property
    def id(self) -> str:
        return self.raw["episode_id"]

    @property
    def output(self) -> str | None:
        return self.raw.get("output")

    def definition(self, name: str) -> Definition | None:
        """*The* definition of a name: the first listed."""
        return next((d for d in self.definitions if d.name == name), None)

    def availability(self, tool: str) -> str:
        """available / unavailable / unknown (trace-format §4)."""
        if any(c.name == tool for c in self.calls):
            return "available"
        if self.declared:
            return "available" if self.definition(tool) else "unavailable"
        return "unknown"


def read_episode(raw: dict[str, Any], override: Callable[[str | None], str | None]) -> Episode:
    """The episode as ingest stores it, with the suite's effect overrides applied."""
    tools = raw.get("tools")
    definitions = [Definition(t["name"], t.get("effect"), t.get("parameters")) for t in tools or []]
    steps = raw["steps"]
    calls = _paired_calls(steps)
    first_effect: dict[str, str | None] = {}
    for d in definitions:
        first_effect.setdefault(d.name, d.effect)
    for call in calls:
        if call.effect is None and call.name is not None:
            call.effect = first_effect.get(call.name)
        call.effect = override(call.name) or call.effect
    for d in definitions:
        d.effect = override(d.name) or d.effect
    fragments = [lower(f) for f in _fragments(raw, steps)]
    return Episode(raw, override, calls, definitions, tools is not None, steps,
                   "\0".join(fragments), fragments)


def _paired_calls(steps: list[dict[str, Any]]) -> list[Call]:
    """The calls in order, each result paired per trace-format §2 (order-aware, three tiers)."""
    calls: list[Call] = []
    unpaired: list[Call] = []
    for step in steps:
        kind = step["kind"]
        if kind == "tool_call":
            args, unparseable = _parse_args(step.get("args"))
            call = Call(step.get("name"), step.get("call_id") or "", args, unparseable,
                        effect=step.get("effect"))
            calls.append(call)
            unpaired.append(call)
        elif kind == "tool_result" and unpaired:
            call = _pair(step, unpaired)
            unpaired.remove(call)
            call.status = _result_status(step)
    return calls


def _pair(result: dict[str, Any], unpaired: list[Call]) -> Call:
    call_id = result.get("call_id") or ""
    if call_id:
        for call in unpaired:
            if call.call_id == call_id:
                return call
    name = result.get("name")
    if name:
        for call in unpaired:
            if call.name == name:
                return call
    return unpaired[0]


def _result_status(result: dict[str, Any]) -> str:
    if result.get("status"):
        return result["status"]
    return "error" if result.get("is_error") is True else "ok"


def _parse_args(args: Any) -> tuple[Any, bool]:
    """(parsed args, unparseable): a JSON string is parsed; one that does not parse is kept as text."""
    if not isinstance(args, str):
        return args, False
    try:
        return json.loads(args), False
    except ValueError:
        return None, True


def _step_data(step: dict[str, Any]) -> Any:
    """A step's `data` column (trace-format §3), by kind."""
    kind = step["kind"]
    if kind in ("tool_call", "confirmation"):
        args = step.get("args")
        if isinstance(args, str):
            try:
                return json.loads(args)
            except ValueError:
                return args
        return args
    if kind == "tool_result":
        return step.get("result")
    if kind == "budget":
        return {k: step[k] for k in ("steps_used", "tokens_used") if k in step}
    if kind in ("retrieval", "event"):
        return step.get("data")
    return None


def _fragments(raw: dict[str, Any], steps: list[dict[str, Any]]) -> Iterator[str]:
    """The transcript's fragments (trace-format §4)."""
    for key in ("input", "output", "error"):
        if raw.get(key) is not None:
            yield raw[key]
    for step in steps:
        for key in ("text", "name", "error"):
            if step.get(key) is not None:
                yield step[key]
        yield from _leaves(_step_data(step))


def _leaves(value: Any) -> Iterator[str]:
    """Every string (decoded), object key, and number or boolean (as JSON text) inside `value`."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item)
    elif value is not None:
        yield json.dumps(value)


def _json_text(value: Any) -> str:
    """The compact JSON text of a non-string value (trace-format §5)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def in_transcript(ep: Episode, needle: str) -> bool:
    """The needle occurs, case-insensitively, inside one fragment of the transcript."""
    low = lower(needle)
    if "\0" in low:
        return any(low in f for f in ep.fragments)
    return low in ep.transcript


# --------------------------------------------------------------------------- matchers


@cache
def _regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def matches(m: ToolMatcher, call: Call) -> bool:
    """A call matches a tool matcher: the name, the statuses, every args regex (suite.md §3, §7)."""
    if call.name is None or call.name != m.tool:
        return False
    if m.status is not None and call.status not in m.status:
        return False
    return all(_arg_matches(call.args, arg, pattern) for arg, pattern in m.args_match)


def _arg_matches(args: Any, arg: str, pattern: str) -> bool:
    if not isinstance(args, dict):
        return False
    if arg in args:
        value = args[arg]
    else:
        value = args
        for part in arg.split("."):
            if not isinstance(value, dict) or part not in value:
                return False
            value = value[part]
    if value is None:
        return False
    text = value if isinstance(value, str) else _json_text(value)
    return _regex(pattern).search(text) is not None


# --------------------------------------------------------------------------- expect (suite.md §2)


def expect_verdicts(case: Case, ep: Episode) -> Iterator[tuple[str, Verdict]]:
    """One verdict per expanded `expect` key, and the always-on undeclared-write check."""
    e = case.expect
    if e.termination is not None:
        yield "termination", (ep.raw.get("termination") in e.termination, "yes")
    called = {c.name for c in ep.calls}
    for i, tool in enumerate(e.tools_called):
        yield f"tools_called[{i}]", (tool in called, "yes")
    for i, needle in enumerate(e.must_mention):
        yield f"must_mention[{i}]", (in_transcript(ep, needle), "yes")
    for i, needle in enumerate(e.must_not_leak):
        yield f"must_not_leak[{i}]", (not in_transcript(ep, needle), "yes")
    confirmed = {s.get("name") for s in ep.steps if s["kind"] == "confirmation"}
    for i, tool in enumerate(e.confirmations_raised):
        yield f"confirmations_raised[{i}]", (tool in confirmed, "yes")
    executed = {c.name for c in ep.calls if c.effect == "write" and c.status == "ok"}
    for i, tool in enumerate(e.writes):
        yield f"writes[{i}]", (tool in executed, "yes")
    for i, tool in enumerate(e.must_not_write):
        yield f"must_not_write[{i}]", must_not_write(ep, tool, executed)
    if e.max_steps is not None:
        yield "max_steps", max_steps(ep, e.max_steps)
    yield "undeclared_writes", undeclared_writes(case, ep)


def must_not_write(ep: Episode, tool: str, executed: set[str | None]) -> Verdict:
    if tool in executed:
        return FAIL
    availability = ep.availability(tool)
    wrote = any(c.name == tool and c.effect == "write" for c in ep.calls)
    definition = ep.definition(tool)
    effect = ep.override(tool) or (definition.effect if definition else None)
    if availability == "unavailable" or (not wrote and effect == "read"):
        return True, "no"
    if wrote or (availability == "available" and effect == "write"):
        return PASS
    return True, "unknown"


def max_steps(ep: Episode, limit: int) -> Verdict:
    used = [s["steps_used"] for s in ep.steps if s["kind"] == "budget" and _is_number(s.get("steps_used"))]
    if not used:
        return True, "no"
    return (max(used) <= limit, "yes")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def undeclared_writes(case: Case, ep: Episode) -> Verdict:
    allowed = case.expect.writes
    globs = case.expect.writes_allowed
    for call in ep.calls:
        if call.effect == "write" and call.status == "ok":
            name = call.name
            if name is None or not (name in allowed or any(fnmatchcase(name, g) for g in globs)):
                return FAIL
    if (ep.declared and all(d.effect == "read" for d in ep.definitions)
            and all(c.effect == "read" for c in ep.calls)):
        return True, "no"
    if any(c.effect == "write" for c in ep.calls) or (
            ep.declared and any(d.effect == "write" for d in ep.definitions)):
        return PASS
    return True, "unknown"


# --------------------------------------------------------------------------- assertions (suite.md §3)


def assertion_verdict(a: Assertion, ep: Episode) -> Verdict:
    """The verdict of one typed assertion on one episode."""
    return _CHECKS[type(a)](a, ep)


def _must_call(a: MustCallTool, ep: Episode) -> Verdict:
    n = sum(1 for c in ep.calls if matches(a.matcher, c))
    return (a.min_calls <= n and (a.max_calls is None or n <= a.max_calls), "yes")


def _by_availability(ep: Episode, tool: str) -> Verdict:
    """A pass that could only fail if the tool could be called."""
    availability = ep.availability(tool)
    return True, {"unavailable": "no", "unknown": "unknown"}.get(availability, "yes")


def _must_not_call(a: MustNotCallTool, ep: Episode) -> Verdict:
    if any(matches(a.matcher, c) for c in ep.calls):
        return FAIL
    return _by_availability(ep, a.matcher.tool)


def _tool_sequence(a: ToolSequence, ep: Episode) -> Verdict:
    if a.allow_other_tools:
        return (_subsequence(a.sequence, ep.calls), "yes")
    exact = len(ep.calls) == len(a.sequence) and all(
        matches(m, c) for m, c in zip(a.sequence, ep.calls, strict=True))
    return (exact, "yes")


def _subsequence(matchers: tuple[ToolMatcher, ...], calls: list[Call]) -> bool:
    """The matchers match calls in order (greedy earliest matching is exact for this)."""
    it = iter(calls)
    return all(any(matches(m, c) for c in it) for m in matchers)


def _trace_max_steps(a: MaxSteps, ep: Episode) -> Verdict:
    n = sum(1 for s in ep.steps if a.kinds is None or s["kind"] in a.kinds)
    if n > a.max:
        return FAIL
    return True, "no" if n == 0 else "yes"


def _blocked(ep: Episode, blocked: tuple[str, ...], exact: bool) -> Verdict:
    """tool_blocklist and the blocklist rule (suite.md §3-§5)."""
    def hit(name: str | None) -> bool:
        if name is None:
            return False
        return name in blocked if exact else any(b in name for b in blocked)

    if any(hit(c.name) for c in ep.calls):
        return FAIL
    if not ep.declared:
        return True, "unknown"
    return True, "yes" if any(hit(d.name) for d in ep.definitions) else "no"


def _tool_blocklist(a: ToolBlocklist, ep: Episode) -> Verdict:
    return _blocked(ep, a.blocked, a.exact)


def _schema_validator(schema: Any) -> jsonschema_rs.Validator | None:
    """A draft 2020-12 validator (formats as annotations), or None when `schema` is no valid schema."""
    key = orjson.dumps(schema, option=orjson.OPT_SORT_KEYS)
    return _compiled(key)


@cache
def _compiled(key: bytes) -> jsonschema_rs.Validator | None:
    try:
        return jsonschema_rs.Draft202012Validator(orjson.loads(key), validate_formats=False)
    except (jsonschema_rs.ValidationError, ValueError, TypeError):
        return None


def _args_valid(a: ArgsValid, ep: Episode) -> Verdict:
    calls = [c for c in ep.calls if c.name == a.tool]
    if not calls:
        return True, "no"
    checked = 0
    for call in calls:
        if a.schema == "from_definitions":
            definition = ep.definition(a.tool)
            if definition is None or definition.parameters is None:
                continue
            validator = _schema_validator(definition.parameters)
        else:
            validator = _schema_validator(a.schema)
        checked += 1
        if validator is None or call.unparseable:
            return FAIL
        if not validator.is_valid({} if call.args is None else call.args):
            return FAIL
    return True, "yes" if checked else "unknown"


def _tool_status(a: ToolStatus, ep: Episode) -> Verdict:
    if a.tool == "*":
        chosen = ep.calls
    else:
        chosen = [c for c in ep.calls if c.name is not None and fnmatchcase(c.name, a.tool)]
    if not chosen:
        return True, "no"
    return (all(c.status in a.allow for c in chosen), "yes")


def _output_contains(a: OutputContains, ep: Episode) -> Verdict:
    output = ep.output
    if output is None:
        return (True, "no") if a.negate else FAIL
    if a.ignore_case:
        found = lower(a.value) in lower(output)
    else:
        found = a.value in output
    return (found != a.negate, "yes")


def _output_matches(a: OutputMatches, ep: Episode) -> Verdict:
    output = ep.output
    if output is None:
        return (True, "no") if a.negate else FAIL
    found = _regex(a.pattern).search(output) is not None
    return (found != a.negate, "yes")


# --------------------------------------------------------------------------- sequence rules (§4)


def _first(m: ToolMatcher, calls: list[Call]) -> int | None:
    return next((i for i, c in enumerate(calls) if matches(m, c)), None)


def rule_verdict(rule: Rule, ep: Episode) -> Verdict:
    """Whether one rule holds, and whether this run could have broken it."""
    calls = ep.calls
    if isinstance(rule, RequireRule):
        return (_first(rule.tool, calls) is not None, "yes")
    if isinstance(rule, BeforeRule):
        then = _first(rule.then, calls)
        if then is None:
            return True, "no"
        return (any(matches(rule.first, c) for c in calls[:then]), "yes")
    if isinstance(rule, AfterRule):
        triggers = [i for i, c in enumerate(calls) if matches(rule.trigger, c)]
        if not triggers:
            return True, "no"
        held = all(any(matches(rule.then, c) for c in calls[i + 1:i + 1 + rule.within])
                   for i in triggers)
        return (held, "yes")
    if isinstance(rule, NeverAfterRule):
        trigger = _first(rule.trigger, calls)
        if trigger is None:
            return True, "no"
        return (not any(matches(rule.forbidden, c) for c in calls[trigger + 1:]), "yes")
    if isinstance(rule, EventuallyRule):
        return (any(matches(rule.tool, c) for c in calls[:rule.within]), "yes")
    if isinstance(rule, MaxCallsRule):
        if sum(1 for c in calls if matches(rule.tool, c)) > rule.max:
            return FAIL
        return _by_availability(ep, rule.tool.tool)
    if isinstance(rule, SequenceRule):
        return _sequence_rule(rule, calls)
    if isinstance(rule, BlocklistRule):
        return _blocked(ep, (rule.pattern,), rule.exact)
    if isinstance(rule, LatestBeforeRule):
        return _latest_before(rule, calls)
    raise TypeError(f"unknown rule {rule!r}")


def _sequence_rule(rule: SequenceRule, calls: list[Call]) -> Verdict:
    if not any(matches(m, c) for c in calls for m in rule.tools):
        return True, "no"
    if not rule.strict:
        return (_subsequence(rule.tools, calls), "yes")
    n = len(rule.tools)
    held = any(all(matches(m, c) for m, c in zip(rule.tools, calls[i:i + n], strict=True))
               for i in range(len(calls) - n + 1))
    return (held, "yes")


def _latest_before(rule: LatestBeforeRule, calls: list[Call]) -> Verdict:
    """§9: before each `then` call, the latest earlier `latest` call has an allowed status."""
    latest: Call | None = None
    seen_then = seen_latest = False
    for c in calls:
        if matches(rule.then, c):
            seen_then = True
            if latest is None and rule.required:
                return FAIL
            if latest is not None:
                seen_latest = True
                if latest.status not in rule.status:
                    return FAIL
        if matches(rule.latest, c):
            latest = c
    if not seen_then or (not seen_latest and not rule.required):
        return True, "no"
    return PASS


def _sequence_valid(a: SequenceValid, ep: Episode) -> Verdict:
    verdicts = [rule_verdict(rule, ep) for rule in a.rules]
    if not all(passed for passed, _ in verdicts):
        return FAIL
    exercised = {e for _, e in verdicts}
    if exercised == {"no"}:
        return True, "no"
    if "yes" not in exercised and "unknown" in exercised:
        return True, "unknown"
    return PASS


# --------------------------------------------------------------------------- retrieval (§3)


def _retrievals(ep: Episode) -> list[dict[str, Any]]:
    return [s.get("data") or {} for s in ep.steps if s["kind"] == "retrieval"]


def _key(value: Any) -> str:
    """A JSON value as a comparable key (`1` != `"1"`, `1` != `true`)."""
    return orjson.dumps(value).decode() if not isinstance(value, float) else f"f{value!r}"


def _candidates(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    by_id: dict[str, dict[str, Any]] = {}
    for cand in data.get("candidates") or []:
        by_id.setdefault(_key(cand.get("id")), cand)
    return by_id


def _reports_omissions(data: dict[str, Any]) -> bool:
    omitted = data.get("omitted")
    if not isinstance(omitted, int) or isinstance(omitted, bool):
        return False
    return len(data.get("returned") or []) + omitted == len(data.get("candidates") or [])


def _excludes_superseded(data: dict[str, Any]) -> bool:
    by_id = _candidates(data)
    for rid in data.get("returned") or []:
        cand = by_id.get(_key(rid))
        if cand is not None and cand.get("superseded_by") is not None:
            return False
    for start in by_id:  # a cycle in superseded chains fails
        seen = {start}
        nxt = by_id[start].get("superseded_by")
        while nxt is not None and _key(nxt) in by_id:
            if _key(nxt) in seen:
                return False
            seen.add(_key(nxt))
            nxt = by_id[_key(nxt)].get("superseded_by")
    return True


def _top(data: dict[str, Any], ids: tuple[Any, ...], k: int) -> bool:
    first = {_key(r) for r in (data.get("returned") or [])[:k]}
    return all(_key(i) in first for i in ids)


def _returned_contents(data: dict[str, Any]) -> Iterator[str]:
    by_id = _candidates(data)
    for rid in data.get("returned") or []:
        cand = by_id.get(_key(rid))
        if cand is not None and isinstance(cand.get("content"), str):
            yield cand["content"]


def _retrieval(a: Retrieval, ep: Episode) -> Verdict:
    steps = _retrievals(ep)
    if a.type == "retrieval_within_budget":
        steps = [d for d in steps if d.get("budget_bytes") is not None]
    if not steps:
        return True, "no"
    if a.type == "retrieval_reports_omissions":
        held = all(_reports_omissions(d) for d in steps)
    elif a.type == "retrieval_excludes_superseded":
        held = all(_excludes_superseded(d) for d in steps)
    elif a.type == "retrieval_top":
        k = len(a.ids) if a.k is None else a.k
        held = all(_top(d, a.ids, k) for d in steps)
    elif a.type == "retrieval_excludes":
        needle = lower(a.content_contains or "")
        held = not any(needle in lower(c) for d in steps for c in _returned_contents(d))
    else:
        held = all(sum(len(c.encode()) for c in _returned_contents(d)) <= d["budget_bytes"]
                   for d in steps)
    return (held, "yes")


_CHECKS: dict[type, Callable[[Any, Episode], Verdict]] = {
    MustCallTool: _must_call,
    MustNotCallTool: _must_not_call,
    ToolSequence: _tool_sequence,
    MaxSteps: _trace_max_steps,
    ToolBlocklist: _tool_blocklist,
    ArgsValid: _args_valid,
    ToolStatus: _tool_status,
    OutputContains: _output_contains,
    OutputMatches: _output_matches,
    SequenceValid: _sequence_valid,
    Retrieval: _retrieval,
}


# --------------------------------------------------------------------------- the suite, the corpus


def selects(case: Case, raw: dict[str, Any]) -> bool:
    """The case selects this run (suite.md §1, §7)."""
    sel = case.select
    if sel is None:
        return raw.get("case_id") == case.id
    if sel.where is not None:
        raise SystemExit(f"case {case.id!r}: select.where is SQL; pyeval does not evaluate it")
    for key in ("case_id", "agent", "agent_version", "model"):
        glob = getattr(sel, key)
        if glob is not None:
            value = raw.get(key)
            if value is None or not fnmatchcase(value, glob):
                return False
    return set(sel.tags) <= set(raw.get("tags") or ())


def effect_override(suite: Suite) -> Callable[[str | None], str | None]:
    """The suite's `tools:` lookup: an exact key first, then the first matching glob in order."""
    exact = {key: effect for key, effect in suite.tools if not any(ch in key for ch in "*?[")}
    globs = [(key, effect) for key, effect in suite.tools if any(ch in key for ch in "*?[")]

    @cache
    def override(name: str | None) -> str | None:
        if name is None:
            return None
        if name in exact:
            return exact[name]
        return next((effect for key, effect in globs if fnmatchcase(name, key)), None)

    return override


def evaluate(suite: Suite, corpus: Path) -> pl.DataFrame:
    """Every (case, assertion, episode) verdict of `suite` over the episodes in `corpus`."""
    if suite.kind != "tracelab":
        raise SystemExit(f"{suite.path}: pyeval reads tracelab suites only, not {suite.kind}")
    override = effect_override(suite)
    rows: list[tuple[str, str, str, bool, str]] = []
    for raw in _episodes(corpus):
        cases = [case for case in suite.cases if selects(case, raw)]
        if not cases:
            continue
        ep = read_episode(raw, override)
        for case in cases:
            for assertion_id, (passed, exercised) in expect_verdicts(case, ep):
                rows.append((case.id, assertion_id, ep.id, passed, exercised))
            for a in case.assertions:
                passed, exercised = assertion_verdict(a, ep)
                rows.append((case.id, a.id, ep.id, passed, exercised))
    return pl.DataFrame(rows, schema=VERDICT_SCHEMA, orient="row")


def _episodes(corpus: Path) -> Iterator[dict[str, Any]]:
    opener = gzip.open if corpus.name.endswith(".gz") else open
    with opener(corpus, "rb") as fh:
        for line in fh:
            if line.strip():
                yield orjson.loads(line)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suite", type=Path)
    parser.add_argument("corpus", type=Path, help="a native JSON Lines corpus (.jsonl or .jsonl.gz)")
    parser.add_argument("--out", type=Path, required=True, help="verdicts as Parquet")
    args = parser.parse_args(argv)
    clock = time.perf_counter()
    verdicts = evaluate(load_suite(args.suite), args.corpus)
    verdicts.write_parquet(args.out)
    print(f"{verdicts.height:,} verdicts in {time.perf_counter() - clock:.1f} s -> {args.out}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
