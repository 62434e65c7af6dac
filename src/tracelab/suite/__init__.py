"""Suites: YAML/JSON -> typed model -> static sweep (-> compiled SQL -> results).

`load_suite` validates a suite file into an immutable `Suite`; `lint_suite`
finds what cannot fail or cannot pass. Both are pure: no store is needed (`where` checks a
suite's SQL filters against the store's schema). May import: `tracelab.store` and the foundation
modules; never the engine that compiles what it loads.
"""
from __future__ import annotations

from tracelab.suite.lint import Finding, lint_findings_frame, lint_suite
from tracelab.suite.load import load_suite
from tracelab.suite.model import (
    AfterRule,
    ArgsValid,
    Assertion,
    BeforeRule,
    BlocklistRule,
    Case,
    Effect,
    EventuallyRule,
    Expect,
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
    Select,
    SequenceRule,
    SequenceValid,
    Status,
    Suite,
    SuiteKind,
    ToolBlocklist,
    ToolMatcher,
    ToolSequence,
    ToolStatus,
)
from tracelab.suite.registry import FindingKind
from tracelab.suite.schemas import SchemaRefused, schema_validator
from tracelab.suite.where import where_predicate

__all__ = [
    "AfterRule",
    "ArgsValid",
    "Assertion",
    "BeforeRule",
    "BlocklistRule",
    "Case",
    "Effect",
    "EventuallyRule",
    "Expect",
    "Finding",
    "FindingKind",
    "LatestBeforeRule",
    "MaxCallsRule",
    "MaxSteps",
    "MustCallTool",
    "MustNotCallTool",
    "NeverAfterRule",
    "OutputContains",
    "OutputMatches",
    "RequireRule",
    "Retrieval",
    "Rule",
    "SchemaRefused",
    "Select",
    "SequenceRule",
    "SequenceValid",
    "Status",
    "Suite",
    "SuiteKind",
    "ToolBlocklist",
    "ToolMatcher",
    "ToolSequence",
    "ToolStatus",
    "lint_findings_frame",
    "lint_suite",
    "load_suite",
    "schema_validator",
    "where_predicate",
]
