"""The typed suite model: what `load` produces and `compile` consumes.

Every class mirrors a construct of docs/suites.md; field names follow the YAML keys.
Instances are immutable and carry no YAML/dict leftovers: loading validates
everything (§1, §7) before one of these is built.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

Status = Literal["ok", "error", "denied", "missing"]
Effect = Literal["read", "write"]
EFFECTS: tuple[Effect, ...] = get_args(Effect)
SuiteKind = Literal["tracelab", "harness", "assay"]

FROM_DEFINITIONS = "from_definitions"
"""`args_valid.schema` that validates each call against its run's recorded `parameters`."""


@dataclass(frozen=True)
class ToolMatcher:
    """Which calls a tool field matches (docs/suites.md §3, §8).

    A tool name (`tool`) or a name glob (`tool_glob`), optionally narrowed by
    argument patterns and call statuses; or `any_of`, a list of such matchers
    of which any may match (then every other field is empty).
    """

    tool: str | None = None
    """An exact tool name; None for a glob or an any_of matcher."""
    args_match: tuple[tuple[str, str], ...] = ()
    """(ARG, RE2 pattern) pairs; every one must match. An ARG given a list of patterns
    appears once per pattern."""
    status: tuple[Status, ...] | None = None
    """Statuses that match; None = any status."""
    tool_glob: str | None = None
    """A case-sensitive glob over tool names, in place of `tool`."""
    any_of: tuple[ToolMatcher, ...] = ()
    """The branches of an any_of matcher (none of them an any_of)."""

    @property
    def plain(self) -> bool:
        """True when the matcher is just a name (no args_match, no status, no glob, no any_of)."""
        return (self.tool is not None and not self.args_match and self.status is None)

    @property
    def branches(self) -> tuple[ToolMatcher, ...]:
        """The matchers of an any_of, or this matcher alone."""
        return self.any_of or (self,)


@dataclass(frozen=True)
class Select:
    """Which stored runs a case covers (docs/suites.md §1, §7). Absent keys do not filter."""

    case_id: str | None = None
    agent: str | None = None
    agent_version: str | None = None
    model: str | None = None
    tags: tuple[str, ...] = ()
    where: str | None = None
    """One boolean SQL expression over `episodes`, validated at load."""


@dataclass(frozen=True)
class Expect:
    """The run-level vocabulary of docs/suites.md §2, after `defaults` are merged."""

    termination: tuple[str, ...] | None = None
    tools_called: tuple[str, ...] = ()
    must_mention: tuple[str, ...] = ()
    must_not_leak: tuple[str, ...] = ()
    confirmations_raised: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    writes_allowed: tuple[str, ...] = ()
    """Tool names or globs."""
    must_not_write: tuple[str, ...] = ()
    max_steps: int | None = None


# --- typed assertions (docs/suites.md §3) -------------------------------------------------


@dataclass(frozen=True)
class Assertion:
    """Base of typed assertions: `id` is explicit or `<type>[<index>]`."""

    id: str
    type: str


@dataclass(frozen=True)
class MustCallTool(Assertion):
    matcher: ToolMatcher
    min_calls: int = 1
    max_calls: int | None = None


@dataclass(frozen=True)
class MustNotCallTool(Assertion):
    matcher: ToolMatcher


@dataclass(frozen=True)
class ToolSequence(Assertion):
    sequence: tuple[ToolMatcher, ...]
    allow_other_tools: bool


@dataclass(frozen=True)
class MaxSteps(Assertion):
    max: int
    kinds: tuple[str, ...] | None = None
    """None = all kinds."""


@dataclass(frozen=True)
class ToolBlocklist(Assertion):
    blocked: tuple[str, ...]
    exact: bool = False
    """Assay's meaning: blocked names are exact tool names, not substrings."""


@dataclass(frozen=True)
class ArgsValid(Assertion):
    tool: str
    schema: Any
    """A JSON Schema (dict or bool) after `$file` resolution, or the string 'from_definitions'."""


@dataclass(frozen=True)
class SchemaCheck:
    """A compiled args_valid unit: what Python needs to validate the calls SQL hands it."""

    case_id: str
    assertion_id: str
    tool: str
    schema: Any
    """A JSON Schema (dict or bool), or FROM_DEFINITIONS."""


@dataclass(frozen=True)
class ToolStatus(Assertion):
    tool: str
    """A name or glob; '*' matches every call, a nameless one included."""
    allow: tuple[Status, ...] = ("ok",)


@dataclass(frozen=True)
class OutputContains(Assertion):
    """`output_contains` / `output_not_contains` (negate=True)."""

    value: str
    ignore_case: bool = False
    negate: bool = False


@dataclass(frozen=True)
class OutputMatches(Assertion):
    """`output_matches` / `output_not_matches` (negate=True)."""

    pattern: str
    negate: bool = False


@dataclass(frozen=True)
class Retrieval(Assertion):
    """The five `retrieval_*` assertions; `type` says which."""

    ids: tuple[Any, ...] = ()
    """retrieval_top: the ids (JSON values: 1 != "1")."""
    k: int | None = None
    content_contains: str | None = None


# --- sequence rules (docs/suites.md §4) -----------------------------------------------------


@dataclass(frozen=True)
class Rule:
    type: str


@dataclass(frozen=True)
class RequireRule(Rule):
    tool: ToolMatcher


@dataclass(frozen=True)
class BeforeRule(Rule):
    first: ToolMatcher
    then: ToolMatcher


@dataclass(frozen=True)
class AfterRule(Rule):
    trigger: ToolMatcher
    then: ToolMatcher
    within: int = 1


@dataclass(frozen=True)
class NeverAfterRule(Rule):
    trigger: ToolMatcher
    forbidden: ToolMatcher


@dataclass(frozen=True)
class EventuallyRule(Rule):
    tool: ToolMatcher
    within: int


@dataclass(frozen=True)
class MaxCallsRule(Rule):
    tool: ToolMatcher
    max: int


@dataclass(frozen=True)
class SequenceRule(Rule):
    tools: tuple[ToolMatcher, ...]
    strict: bool = False


@dataclass(frozen=True)
class BlocklistRule(Rule):
    pattern: str
    exact: bool = False
    """Assay's meaning when True: the pattern names an exact tool."""


@dataclass(frozen=True)
class LatestBeforeRule(Rule):
    """docs/suites.md §9: before each `then` call, the latest earlier `latest` call has a status
    in `status`."""

    then: ToolMatcher
    latest: ToolMatcher
    status: tuple[Status, ...] = ("ok",)
    required: bool = False
    """A `then` call with no earlier `latest` call fails (else it is skipped)."""


@dataclass(frozen=True)
class SequenceValid(Assertion):
    rules: tuple[Rule, ...]


# --- cases and suites ------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    id: str
    category: str | None = None
    select: Select | None = None
    """None: runs whose case_id equals `id` (harness suites: or whose input equals `input`)."""
    input: str | None = None
    """Harness suites only: selects runs with no case_id whose input equals it."""
    min_pass_rate: float = 1.0
    allow_no_runs: bool = False
    expect: Expect = field(default_factory=Expect)
    assertions: tuple[Assertion, ...] = ()
    line: int | None = None
    """Line of the case in the suite file, for messages."""


@dataclass(frozen=True)
class Suite:
    name: str
    path: Path
    sha256: str
    kind: SuiteKind
    cases: tuple[Case, ...]
    tools: tuple[tuple[str, Effect], ...] = ()
    """`tools:` effect overrides in suite order (exact names and globs)."""
    min_cases: int = 5
