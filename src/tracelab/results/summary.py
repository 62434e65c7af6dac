"""What a store holds, as data: the counts `tracelab info` and `tracelab demo` print.

The queries live in `sql/results/summary/`; the CLI only renders what these functions return.
"""
from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tracelab.sqlfiles import load_sql
from tracelab.store import TABLES

if TYPE_CHECKING:
    import polars as pl

    from tracelab.store import Store


@dataclass(frozen=True)
class StoreSummary:
    """Rows per table, ingested files per format, runs per agent, and what the runs declared."""

    store: str
    """The store's path."""
    tables: dict[str, int]
    """Rows per table, in `tracelab.store.TABLES` order."""
    formats: list[tuple[str, int]]
    """(format, files), most files first."""
    agents: list[tuple[str | None, int]]
    """(agent, runs) for the ten most frequent agents; None for runs that name none."""
    agents_total: int
    """How many agents there are in all (None counting as one): more than `agents` lists when it
    left some out."""
    declared: int
    """Runs that recorded their tool definitions."""
    undeclared: int
    """Runs that did not."""
    writes: int
    """Executed writes: tool calls with effect write that ran."""
    unknown_effect: int
    """Calls whose tool has no known effect."""
    unread: dict[str, dict[str, int]] = field(default_factory=dict)
    """Per format, records of types its adapter does not know, by type (`sources.unread`)."""


def summarize(store: Store) -> StoreSummary:
    """The summary of `store` (one query per line of `tracelab info`)."""
    con = store.con
    # table names come from the TABLES allow-list, never from input
    tables = {table: con.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0] for table in TABLES}
    declared, undeclared = con.execute(load_sql("results/summary/tools_declared")).fetchall()[0]
    agents = con.execute(load_sql("results/summary/agents")).fetchall()
    return StoreSummary(
        store=str(store.path),
        tables=tables,
        formats=[(name, files) for name, files in con.execute(load_sql("results/summary/formats")).fetchall()],
        agents=[(agent, runs) for agent, runs, _ in agents],
        agents_total=agents[0][2] if agents else 0,
        declared=declared,
        undeclared=undeclared,
        writes=executed_write_count(store),
        unknown_effect=store.effects.unknown_calls(),
        unread=merge_unread((fmt, json.loads(counts))
                            for fmt, counts in con.execute(load_sql("results/summary/unread")).fetchall()),
    )


def merge_unread(per_file: Iterable[tuple[str | None, dict[str, int] | None]]) -> dict[str, dict[str, int]]:
    """Unread record types summed per format, from each file's counts."""
    merged: dict[str, dict[str, int]] = {}
    for fmt, counts in per_file:
        for kind, n in (counts or {}).items():
            into = merged.setdefault(fmt or "?", {})
            into[kind] = into.get(kind, 0) + n
    return merged


def unread_line(fmt: str, counts: dict[str, int]) -> str:
    """One line naming what a format's adapter did not read ("codex: 40 lines of 2 unknown types
    not read: world_state, inter_agent_communication_metadata"): a newer version's record types."""
    from tracelab.results.report import printable

    return f"{printable(fmt)}: {unread_text(counts)}"


def unread_text(counts: dict[str, int]) -> str:
    """"40 lines of 2 unknown types not read: world_state, ...", most frequent first. Type names
    come from the files: printed escaped, each cut to `TYPE_NAME_SHOWN` characters."""
    from tracelab.results.report import printable

    lines = sum(counts.values())
    names = ", ".join(printable(kind[:TYPE_NAME_SHOWN]) for kind in sorted(counts, key=lambda k: (-counts[k], k)))
    return (f"{lines} line{'s' if lines != 1 else ''} of {len(counts)} unknown "
            f"type{'s' if len(counts) != 1 else ''} not read: {names}")


TYPE_NAME_SHOWN = 80


def executed_write_count(store: Store) -> int:
    """How many tool calls with effect write ran (the `executed_writes` view)."""
    count: int = store.con.execute(load_sql("results/summary/executed_write_count")).fetchall()[0][0]
    return count


def executed_writes(store: Store) -> pl.DataFrame:
    """Every executed write (run, tool, arguments), in run and call order."""
    return store.sql(load_sql("results/summary/executed_writes"))


def runs_mentioning(store: Store, needle: str) -> pl.DataFrame:
    """(run, origin) for every run whose transcript holds `needle`, ignoring case."""
    return store.sql(load_sql("results/summary/runs_mentioning"), {"needle": needle})

