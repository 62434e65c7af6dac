"""Evaluate a suite over the stored runs: compiled parameter tables, one query per family.

The number of queries depends on the suite's assertion families only, never on
the number of runs or cases: the selected runs, calls and
matches are built once as temp tables, then each family's query in
`sql/engine/assertions/` gives its verdict rows for every case and run at once. Of those, the
plain passes (passed, exercised `yes`, no reason: most of them) stay in DuckDB: only the other
rows and the runs each case selected come back (`CheckResult.notable`, `.selection`).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any

import duckdb
import polars as pl

from tracelab.engine.args_valid import validate_calls
from tracelab.engine.columns import NOT_PLAIN_PASS
from tracelab.engine.compile import Plan, compile_suite
from tracelab.engine.needles import lower_moved, lower_needles, prefilter_re2, withhold_reasons
from tracelab.engine.verdicts import STEP_IDX, CheckResult, summarize
from tracelab.errors import UsageError
from tracelab.frames import ArrowStream
from tracelab.sqlfiles import load_sql, run_script
from tracelab.suite.families import queries
from tracelab.suite.model import Case, Suite
from tracelab.suite.where import where_flags

_NUMBER_CHARACTERS = frozenset("0123456789.e+-")
"""A lowered needle made of these alone could occur in the text of a JSON number."""

_BOOLEAN_TEXTS = ("true", "false")
"""The rendered text of a JSON boolean."""

def evaluate(con: duckdb.DuckDBPyConnection, suite: Suite, *,
             cases: Iterable[str] | None = None, categories: Iterable[str] | None = None,
             strict: bool = False, since: datetime | None = None,
             carried: Callable[[], Carried] | None = None) -> CheckResult:
    """Check `suite` against the runs stored behind `con`.

    Args:
        con: a connection to a store (`Store.con`); read-only stores work too.
        suite: a loaded suite.
        cases: check only these case ids.
        categories: check only cases of these categories.
        strict: count a run with an `exercised = no` row as failed (rows stay as they are).
        since: evaluate only runs ingested after this instant (an incremental check).
        carried: with `since`, gives what an earlier check of the same suite found, called once
            the families ran (it may be read meanwhile: `results.check.read_ahead`); its rows for
            runs not ingested since are kept as they are.

    Raises:
        UsageError: an unknown case id or category.
        SuiteError: a `where` that fails on the stored data, or an invalid args_valid schema.
    """
    chosen = choose_cases(suite, cases, categories)
    plan = compile_suite(suite, chosen)
    with _registered(con, plan.frames):
        try:
            _select(con, suite, plan, since)
            _run_families(con, plan)
            notable = withhold_reasons(_named(_fetch(con, load_sql("engine/assertions/_verdicts")), plan),
                                       plan.frames["p_must_not_leak"]["needle"])
            selection = _fetch(con, "SELECT case_id, episode_id FROM chk_sel")
            kept = (0, 0)
            if carried is not None:
                notable, selection, kept = carried().merged(notable, selection)
        finally:
            con.execute(load_sql("engine/assertions/_cleanup"))
    return summarize(suite.name, chosen, notable, selection, result_units(plan), strict, carried=kept)


def result_units(plan: Plan) -> pl.DataFrame:
    """(case_id, assertion_id, assertion_type): each checked case's results in suite order
    (`CheckResult.units`)."""
    return (plan.frames["p_units"].filter(pl.col("parent_id").is_null())
            .sort("unit_id").select("case_id", "assertion_id", "assertion_type"))


@dataclass(frozen=True)
class Carried:
    """What an earlier check of the same suite found (`check --since`) for the runs not (re-)ingested
    since it started: its notable rows (`CheckResult.notable`) and the runs each case selected
    (`CheckResult.selection`)."""

    notable: pl.DataFrame
    selection: pl.DataFrame

    def merged(self, notable: pl.DataFrame, selection: pl.DataFrame
               ) -> tuple[pl.DataFrame, pl.DataFrame, tuple[int, int]]:
        """Its rows and selection, then the fresh ones (of the runs ingested since: none of its own);
        and how many of each it kept (`CheckResult.carried`)."""
        return (pl.concat([self.notable.select(notable.columns).cast(notable.schema), notable]),
                pl.concat([self.selection.select(selection.columns).cast(selection.schema), selection]),
                (self.notable.height, self.selection.height))


def renewed_runs(con: duckdb.DuckDBPyConnection, since: datetime | None) -> pl.Series:
    """The runs ingested (or ingested again) after `since`: an earlier check's rows of them are stale."""
    return _fetch(con, "SELECT episode_id FROM episodes WHERE ingested_at > $since", {"since": since})["episode_id"]


def _named(rows: pl.DataFrame, plan: Plan) -> pl.DataFrame:
    """The verdict rows of _verdicts.sql with their unit's case, assertion id and type, and the
    step that decides a failure (`step_idx`, Int32; null on passes and run-level failures), by
    unit, then run (`CheckResult.notable`'s order). Sorted here, after the join: at 1M runs Polars
    sorts the 1.34M rows in less time than DuckDB's ORDER BY took (0.53-0.67 s against 0.70-0.81
    for the fetch, join and sort, side by side)."""
    units = plan.frames["p_units"].select("unit_id", "case_id", "assertion_id", "assertion_type")
    return rows.join(units, on="unit_id", how="left").sort("unit_id", "episode_id").select(
        "case_id", "assertion_id", "assertion_type", "episode_id", "passed", "exercised", "reason",
        pl.col("step_idx").cast(STEP_IDX))


def choose_cases(suite: Suite, cases: Iterable[str] | None,
                 categories: Iterable[str] | None) -> tuple[Case, ...]:
    """The suite's cases filtered by `--case` and `--category` (both, when both are given)."""
    chosen = suite.cases
    if cases is not None:
        wanted = list(dict.fromkeys(cases))
        known = {case.id for case in suite.cases}
        unknown = [c for c in wanted if c not in known]
        if unknown:
            raise UsageError(f"{suite.path}: no case {unknown[0]!r} in suite {suite.name!r}")
        chosen = tuple(case for case in chosen if case.id in wanted)
    if categories is not None:
        wanted = list(dict.fromkeys(categories))
        used = {case.category for case in suite.cases}
        unknown = [c for c in wanted if c not in used]
        if unknown:
            raise UsageError(f"{suite.path}: no case has category {unknown[0]!r} "
                             f"(categories: {', '.join(sorted(c for c in used if c)) or 'none'})")
        chosen = tuple(case for case in chosen if case.category in wanted)
    return chosen


def _fetch(con: duckdb.DuckDBPyConnection, query: str,
           params: dict[str, Any] | None = None) -> pl.DataFrame:
    """A query's rows as a Polars frame, read through the Arrow PyCapsule interface
    (`.pl()` goes through pyarrow; see `tracelab.frames.ArrowStream`)."""
    return pl.DataFrame(con.sql(query, params=params))


@contextmanager
def _registered(con: duckdb.DuckDBPyConnection, frames: dict[str, pl.DataFrame]
                ) -> Iterator[None]:
    """The parameter frames as views on `con` while the check runs."""
    for name, frame in frames.items():
        con.register(name, ArrowStream(frame))
    try:
        yield
    finally:
        for name in frames:
            con.unregister(name)


def _select(con: duckdb.DuckDBPyConnection, suite: Suite, plan: Plan, since: datetime | None) -> None:
    """Build chk_sel and chk_runs; a `where` runs apart, in where_flags's sandbox. With `since`, only
    the runs ingested after it are selected among (`check --since`)."""
    if since is None:
        con.execute(load_sql("engine/assertions/_selectable"))
    else:
        run_script(con, "engine/assertions/_selectable_since", {"since": since})
    con.execute(load_sql("engine/assertions/_selection"))
    if plan.has("p_select", has_select=True):
        con.execute(load_sql("engine/assertions/_select_matched"))
        flags = (where_flags(con, plan.wheres, partial(_located, suite)) if plan.wheres
                 else pl.DataFrame(schema={"episode_id": pl.Utf8, "flags": pl.List(pl.Boolean)}))
        con.register("chk_where_flags", ArrowStream(flags))
        try:
            con.execute(load_sql("engine/assertions/_select_keys"))
        finally:
            con.unregister("chk_where_flags")
    con.execute(load_sql("engine/assertions/_runs"))


def _located(suite: Suite, case_id: str) -> str:
    """``file:line: case 'id'``, the start of a message about one case."""
    line = next((case.line for case in suite.cases if case.id == case_id), None)
    return f"{suite.path}:{line}: case {case_id!r}" if line else f"{suite.path}: case {case_id!r}"


def _transcript(con: duckdb.DuckDBPyConnection, needles: dict[str, list[str]]) -> None:
    """Build chk_transcript: the fragments of the selected runs that can hold a needle.

    `numeric`: some needle could occur in a JSON number's text; `scalars`: in a number's or a
    boolean's rendered text (no other needle can, so a data document's scalars are left unread).
    """
    lowered = [needle for family in needles.values() for needle in family]
    numeric = any(set(needle) <= _NUMBER_CHARACTERS for needle in lowered)
    scalars = numeric or any(needle in text for needle in lowered for text in _BOOLEAN_TEXTS)
    pattern = prefilter_re2(lowered, lower_moved(con))
    run_script(con, "engine/assertions/_transcript",
               {"needles": pattern, "doc_needles": rf"\\|{pattern}", "numeric": numeric,
                "scalars": scalars})


COPIED_SHARE = 0.5
"""A check of at most this share of the stored runs copies their rows once (_scoped_copied.sql)."""


def _scope(con: duckdb.DuckDBPyConnection) -> None:
    """The views of the selected runs' stored rows (chk_steps_in, ...): the tables themselves
    when every stored run is selected, which spares each scan a semi-join with chk_runs; a copy of
    their rows when they are at most `COPIED_SHARE` of the stored runs; else the tables filtered."""
    [(selected, stored, lo, hi)] = con.execute(load_sql("engine/assertions/_whole")).fetchall()
    if selected == stored:
        con.execute(load_sql("engine/assertions/_scoped_all"))
    elif selected <= COPIED_SHARE * stored:
        run_script(con, "engine/assertions/_scoped_copied", {"lo": lo, "hi": hi})
    else:
        con.execute(load_sql("engine/assertions/_scoped"))


def _run_families(con: duckdb.DuckDBPyConnection, plan: Plan) -> None:
    """Every family query that has work, each inserting its rows into chk_out."""
    _scope(con)
    con.execute(load_sql("engine/assertions/_tools"))
    con.execute(load_sql("engine/assertions/_out"))
    if plan.has("p_must_mention") or plan.has("p_must_not_leak"):
        _transcript(con, lower_needles(con, plan))
        con.execute(load_sql("engine/assertions/_needle_found"))
    if plan.has("p_matchers") or plan.has("p_sequences"):  # `sequence: []` has no matcher, yet reads chk_hits
        con.execute(load_sql("engine/assertions/_matcher_hits"))
    if plan.has("p_retrieval"):
        con.execute(load_sql("engine/assertions/_retrieval"))
    for query in queries():
        if plan.has(query.table, **dict(query.where)):
            # BY NAME: a family that locates no failure leaves step_idx NULL
            family_sql = load_sql(f"engine/assertions/{query.name}")
            con.execute(f"INSERT INTO chk_out BY NAME SELECT * FROM (\n{family_sql}\n) WHERE {NOT_PLAIN_PASS}")
    if plan.has("p_args_valid"):
        calls = _fetch(con, load_sql("engine/assertions/args_valid"))
        rows = validate_calls(calls, plan.schema_checks)
        con.register("chk_args_valid", ArrowStream(rows))
        try:
            con.execute(f"INSERT INTO chk_out BY NAME SELECT * FROM chk_args_valid WHERE {NOT_PLAIN_PASS}")
        finally:
            con.unregister("chk_args_valid")


__all__ = ["Carried", "choose_cases", "evaluate", "renewed_runs", "result_units"]
