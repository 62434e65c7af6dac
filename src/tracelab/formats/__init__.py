"""Input formats: one reader per format, and the registry, in `tracelab formats` and auto-detection order.

Owns turning one input file's records into native episode dicts: the adapter contract (`base`),
reading a file (`source`) and its records (`records`), the common rules of building an episode
(`episodes`) and of checking a record's values (`values`), spans (`spans`), and one module per
format; nothing here touches a store. May import: the foundation modules (`tracelab.errors`,
`sqlfiles`, `frames`, `bulk_insert`, `native_keys`, `globs`, `documents`) only.
"""
from __future__ import annotations

from tracelab.formats import (
    agentdojo,
    anthropic,
    assay,
    atif,
    claude_code,
    codex,
    inspect_log,
    langfuse,
    langsmith,
    native,
    openai_chat,
    openai_responses,
    openhands,
    openinference,
    otlp,
    swe_agent,
    tau_bench,
)
from tracelab.formats.base import Adapter

# Auto-detection tries these in order and picks the first that claims a file
# (docs/formats.md). Native first: its records are unambiguous. Each module is checked
# against the `Adapter` protocol by mypy: a missing or mistyped name fails `make test`.
ADAPTERS: tuple[Adapter, ...] = (
    native,
    # Framework logs with their own markers (an `eval` spec, an ATIF schema_version,
    # Assay event types): no message log looks like them.
    inspect_log,
    atif,
    assay,
    # Coding-agent sessions and trace-store exports, each known by its own keys (Claude Code's
    # sessionId/parentUuid, Codex's typed payloads, LangSmith's run_type, Langfuse's
    # observations): no message log has them.
    claude_code,
    codex,
    langsmith,
    langfuse,
    # Benchmark outputs, known by their benchmark's keys; before the message logs,
    # since an AgentDojo run is also an OpenAI chat log.
    tau_bench,
    agentdojo,
    swe_agent,
    openhands,
    # Message logs, specific before generic: openai-chat claims any `messages` log
    # without Responses or Anthropic markers, so it stays after both.
    openai_responses,
    anthropic,
    openai_chat,
    # Span traces: OpenInference before OTLP, since it also claims OTLP files whose spans
    # carry `openinference.span.kind`.
    openinference,
    otlp,
)


def all_formats() -> list[Adapter]:
    """Every adapter, in registry order."""
    return list(ADAPTERS)


def merges_files(name: str | None) -> bool:
    """Whether format `name` reads a session whole from each of its files (an adapter's optional
    `merges_files`): the episode of a later file of the session is merged, not already ingested."""
    adapter = next((a for a in ADAPTERS if a.name == name), None)
    return bool(getattr(adapter, "merges_files", False))


def get_format(name: str) -> Adapter:
    """The adapter whose `name` is `name` (a format name as users type it)."""
    from tracelab.errors import UsageError

    for adapter in ADAPTERS:
        if adapter.name == name:
            return adapter
    names = ", ".join(a.name for a in ADAPTERS)
    raise UsageError(f"unknown format {name!r}; known formats: auto, {names}")
