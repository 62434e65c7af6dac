"""Failure location (docs/cli.md): the step where a failed result happened.

Every family writes `step_idx` with its verdict rows (sql/engine/assertions/). Here: the transcript
fragments that hold a leaked string, by step and origin and never by text, for `tracelab show`
and `tracelab view` to withhold them.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

import polars as pl

from tracelab.frames import ArrowStream
from tracelab.sqlfiles import load_sql, run_script

if TYPE_CHECKING:
    import duckdb

from tracelab.engine.verdicts import STEP_IDX

_LEAK_SCHEMA = {"unit_id": pl.Int64, "episode_id": pl.Utf8, "needle": pl.Utf8}
_FOUND_SCHEMA = {**_LEAK_SCHEMA, "step_idx": STEP_IDX, "origin": pl.Utf8, "rank": pl.Int64}


def leak_fragments(con: duckdb.DuckDBPyConnection, leaks: pl.DataFrame) -> pl.DataFrame:
    """Every transcript fragment that holds a leaked string, without its text.

    Args:
        con: a store's connection (its `transcript` view).
        leaks: rows of (unit_id, episode_id, needle): a string and a run it leaked in
            (`unit_id` is any key of the caller's; it comes back as it is).

    Returns:
        unit_id, episode_id, needle, step_idx (NULL for the run's input, output or error),
        origin (`transcript.origin`: input, output, error, step.text, step.name, step.error,
        step.data, step.data.key) and rank (1: the first such fragment of the run).
    """
    leaks = leaks.select(list(_LEAK_SCHEMA)).cast(_LEAK_SCHEMA)  # type: ignore[arg-type]
    if leaks.height == 0:
        return pl.DataFrame(schema=_FOUND_SCHEMA)
    con.register("loc_leaks", ArrowStream(leaks))
    try:
        run_script(con, "engine/location/scope")
        con.execute(_scoped_transcript())
        found = pl.DataFrame(con.sql(load_sql("engine/location/leaks")))
    finally:
        run_script(con, "engine/location/cleanup")
        con.unregister("loc_leaks")
    return found.cast(_FOUND_SCHEMA) if found.height else pl.DataFrame(schema=_FOUND_SCHEMA)  # type: ignore[arg-type]


def _scoped_transcript() -> str:
    """The `transcript` view's own query (sql/store/views/transcript.sql) as temp view loc_transcript
    over loc_episodes and loc_steps: one definition of the transcript, read over a few runs."""
    text = load_sql("store/views/transcript")
    head = "CREATE OR REPLACE VIEW transcript AS"
    scoped, replaced = re.subn(r"\bFROM (episodes|steps)\b", r"FROM loc_\1", text)
    assert text.count(head) == 1 and replaced == text.count("FROM episodes") + text.count("FROM steps") > 0
    return scoped.replace(head, "CREATE OR REPLACE TEMP VIEW loc_transcript AS")


__all__ = ["leak_fragments"]
