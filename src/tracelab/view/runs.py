"""The failing runs a report holds, with their steps, as the JSON its script reads (report.js).

Everything is done set-wise in DuckDB, where the steps are: their texts picked and clipped, the
strings numbered in order of first use and each run's steps written as JSON (sql/view/report/runs_*.sql).
Python decides only what holds a leaked string (`tracelab.view.show`'s rules, on the few fields that
may hold one) and writes each run's own few fields. Neither Polars nor the suite compiler is
imported, unless a leak must be located in the transcript (`show.locate_leaks`, rare).
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tracelab.sqlfiles import load_sql, run_script
from tracelab.view.show import (
    HEAD_FIELDS,
    RUN_FIELDS,
    STEP_FIELDS,
    Failure,
    fields_withheld,
    leaked_string,
    locate_leaks,
    resolve_effects,
    withheld_notice,
)

if TYPE_CHECKING:
    import duckdb

CLIP = 240
"""Characters of a step's args or text the file holds once its texts reach `TEXT_CAP`."""
TEXT_CAP = 6_000_000
"""Bytes (UTF-8) of step text a report holds whole, all runs together (in the file's order); past
it, each text is clipped to `CLIP` characters and says how many it left out."""
LAST = 1 << 30
"""Where a step's kind, status and effect come among its strings: after all its failures'."""
_UPPER_ESCAPE = re.compile(r"\\(?:u00([0-9A-F]{2})|.)")
_ANY_UPPER_ESCAPE = re.compile(r"\\u00[0-9a-fA-F]?[A-F]")


@dataclass(frozen=True)
class RunsJson:
    """The runs a report holds: how many, and the JSON text its script reads."""

    count: int
    text: str
    clipped: int = 0
    """Texts clipped to `CLIP` characters: the runs' step texts exceed `TEXT_CAP`."""
    cap: int = 0
    """The cap they were held whole within (`TEXT_CAP`)."""

    def __len__(self) -> int:
        return self.count


def read_runs_json(con: duckdb.DuckDBPyConnection, run_id: str, episode_ids: Sequence[str],
                   needles: Iterable[str]) -> tuple[RunsJson, list[dict[str, Any]]]:
    """The runs `episode_ids` as a report writes them, and the failed results of saved check
    `run_id` for them (`saved.RESULT_COLUMNS` as dicts, by run, case and assertion).

    Every field holding one of `needles` (the strings the check found leaked) is withheld.
    """
    from tracelab.results.saved import notable_results, result_columns

    needles = tuple(dict.fromkeys(n for n in needles if n))
    _table(con, "show_runs", {"episode_id": ("VARCHAR", list(dict.fromkeys(episode_ids)))})
    try:
        cursor = con.execute(f"SELECT {result_columns(con)} FROM {notable_results(con)} "
                             "WHERE run_id = $run AND NOT passed AND episode_id IN (SELECT episode_id FROM show_runs) "
                             "ORDER BY episode_id, case_id, assertion_id", {"run": run_id})
        names = [column[0] for column in cursor.description]
        failures = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
        run_script(con, "view/report/runs_shown")
        run_script(con, "view/report/runs_heads", {"needles": list(needles)})
        resolve_effects(con, run_id)
        con.execute(f"CREATE OR REPLACE TEMP VIEW view_shown_steps AS {_unordered(load_sql('view/show/steps'))}")
        run_script(con, "view/report/runs_read", {"needles": list(needles), "clip": CLIP, "cap": TEXT_CAP})
        by_run: dict[str, list[Failure]] = {}
        for row in failures:
            by_run.setdefault(row["episode_id"], []).append(Failure(
                row["case_id"], row["assertion_id"], row["assertion_type"], row["reason"], row["step_idx"]))
        withheld, steps = _withhold(con, needles, failures)
        count = con.execute("SELECT count(*) FROM view_runs").fetchall()[0][0]
        text = runs_json(con, withheld, steps, {run: tuple(found) for run, found in by_run.items()})
        clipped = con.execute(
            "SELECT (SELECT coalesce(sum((more_sent IS NOT NULL)::INT + (more_said IS NOT NULL)::INT "
            "+ (more_err IS NOT NULL)::INT), 0) FROM view_texts) + (SELECT coalesce(sum((more_output IS NOT NULL)::INT "
            "+ (more_error IS NOT NULL)::INT), 0) FROM view_own_texts)").fetchall()[0][0]
    finally:
        run_script(con, "view/report/runs_cleanup")
    return RunsJson(count, text, int(clipped), TEXT_CAP), failures


Withheld = dict[tuple[str, "int | None"], dict[str, tuple[str, ...]]]
"""(run, step idx or None for the run's own fields) -> field -> the leaked strings it holds."""
_STEP_COLUMNS = ("episode_id", "idx", "kind", *STEP_FIELDS)
_HEAD_COLUMNS = ("episode_id", *RUN_FIELDS)


def _withhold(con: duckdb.DuckDBPyConnection, needles: tuple[str, ...], failures: list[dict[str, Any]]
              ) -> tuple[Withheld, dict[tuple[str, int], dict[str, Any]]]:
    """What holds a leaked string, decided as `tracelab.view.show` does (`fields_withheld`) on the fields that
    may hold one: the runs and steps sql/view/report/runs_heads.sql and runs_read.sql marked (a superset
    of show's `_marked`), and those the transcript search locates.

    Returns the withheld fields, and the whole rows (kind and fields) of the steps that have one."""
    if not needles:
        return {}, {}
    marked: dict[tuple[str, int | None], dict[str, Any]] = {}
    for head in con.execute(f"SELECT {', '.join(_HEAD_COLUMNS)} FROM view_heads WHERE marked").fetchall():
        marked[(head[0], None)] = {**dict(zip(_HEAD_COLUMNS, head, strict=True)), "_marked": True}
    for step in con.execute(f"SELECT {', '.join(_STEP_COLUMNS)} FROM view_steps WHERE marked").fetchall():
        marked[(step[0], step[1])] = {**dict(zip(_STEP_COLUMNS, step, strict=True)), "_marked": True}
    # a leak the stored text shows as it is (case aside) is found field by field below; the
    # others (an escape, a number written otherwise) are located in the transcript
    lowered = [(needle, needle.lower()) for needle in needles]
    found: set[tuple[str, str]] = set()
    for (episode_id, idx), fields in marked.items():
        values = [value.lower() for name in (STEP_FIELDS if idx is not None else RUN_FIELDS)
                  if (value := fields[name]) is not None]
        found.update((episode_id, needle) for needle, low in lowered if any(low in value for value in values))
    named = {reason: leaked_string(reason) for reason in {row["reason"] for row in failures
                                                          if row["assertion_type"] == "must_not_leak"}}
    leaks = dict.fromkeys((row["episode_id"], needle) for row in failures if row["assertion_type"] == "must_not_leak"
                          and (needle := named[row["reason"]]) is not None)
    holding = locate_leaks(con, [pair for pair in leaks if pair not in found])
    located = [key for key in holding if key not in marked]
    if located:
        _table(con, "view_located", {"episode_id": ("VARCHAR", [key[0] for key in located]),
                                     "idx": ("INTEGER", [key[1] for key in located])})
        steps_found = con.execute(f"SELECT {', '.join(f's.{c}' for c in _STEP_COLUMNS)} FROM view_shown_steps s "
                                  "JOIN view_located USING (episode_id, idx)").fetchall()
        marked |= {(step[0], step[1]): {**dict(zip(_STEP_COLUMNS, step, strict=True)), "_marked": False}
                   for step in steps_found}
        heads_found = con.execute(f"SELECT {', '.join(_HEAD_COLUMNS)} FROM view_heads WHERE episode_id IN "
                                  "(SELECT episode_id FROM view_located WHERE idx IS NULL)").fetchall()
        marked |= {(head[0], None): {**dict(zip(_HEAD_COLUMNS, head, strict=True)), "_marked": False}
                   for head in heads_found}
    withheld: Withheld = {}
    steps: dict[tuple[str, int], dict[str, Any]] = {}
    for (episode_id, idx), fields in marked.items():
        held = fields_withheld(fields, STEP_FIELDS if idx is not None else RUN_FIELDS,
                               holding.get((episode_id, idx), {}), needles)
        if held:
            withheld[(episode_id, idx)] = held
            if idx is not None:
                steps[(episode_id, idx)] = fields
    return withheld, steps


def runs_json(con: duckdb.DuckDBPyConnection, withheld: Withheld, steps: dict[tuple[str, int], dict[str, Any]],
              failures: dict[str, tuple[Failure, ...]]) -> str:
    """The runs as the script reads them, as JSON: {"s": [strings], "runs": {id: run}}; every
    text of a run is a position in "s", numbered in order of first use (see report.js).

    Args:
        con: a connection with temp tables `view_runs`, `view_heads` (sql/view/report/runs_heads.sql) and
            `view_steps` (sql/view/report/runs_read.sql): the runs, their header fields and what each of
            their steps shows.
        withheld: the fields withheld, with the leaked strings each holds (`_withhold`).
        steps: the whole rows of the steps with a withheld field (kind and fields).
        failures: the failed results of each run, in the order their strings number them.
    """
    head_fields = ("output", "error", *HEAD_FIELDS)
    heads = [(episode_id, *(withheld_notice(held[name], name) if name in held else None for name in head_fields))
             for (episode_id, idx), held in withheld.items() if idx is None]
    # a withheld step's fields, the withheld ones NULL, and their notices: clipped in SQL as every step is
    shown = [(*key, row["kind"], *(None if name in held else row[name] for name in STEP_FIELDS),
              *(withheld_notice(held[name], name) if name in held else None for name in STEP_FIELDS))
             for key, row in steps.items() for held in (withheld[key],)]
    failed = [(episode_id, f.step_idx, 7 + 2 * k, f.assertion_id, f.reason)
              for episode_id, found in failures.items()
              for k, f in enumerate(f for f in found if f.step_idx is not None)]
    whole = [(episode_id, k, f.assertion_id, f.reason)
             for episode_id, found in failures.items()
             for k, f in enumerate(f for f in found if f.step_idx is None)]
    _table(con, "view_head_withheld", {name: (kind, [row[i] for row in heads]) for i, (name, kind) in enumerate(
        (("episode_id", "VARCHAR"), *((f"w_{name}", "VARCHAR") for name in head_fields)))})
    _table(con, "view_withheld_fields", {name: (kind, [row[i] for row in shown]) for i, (name, kind) in enumerate((
        ("episode_id", "VARCHAR"), ("idx", "INTEGER"), ("kind", "VARCHAR"),
        *((name, "VARCHAR") for name in STEP_FIELDS), *((f"w_{name}", "VARCHAR") for name in STEP_FIELDS)))})
    run_script(con, "view/report/runs_withheld", {"clip": CLIP, "cap": TEXT_CAP})
    _table(con, "view_failed", {name: (kind, [row[i] for row in failed]) for i, (name, kind) in enumerate(
        (("episode_id", "VARCHAR"), ("idx", "INTEGER"), ("slot", "BIGINT"), ("assertion", "VARCHAR"),
         ("reason", "VARCHAR")))})
    _table(con, "view_whole", {name: (kind, [row[i] for row in whole]) for i, (name, kind) in enumerate(
        (("episode_id", "VARCHAR"), ("k", "BIGINT"), ("assertion", "VARCHAR"), ("reason", "VARCHAR")))})
    run_script(con, "view/report/runs_own", {"clip": CLIP, "cap": TEXT_CAP})
    run_script(con, "view/report/runs_strings", {"last": LAST})
    strings = con.execute("SELECT string_agg(to_json(value)::VARCHAR, ',' ORDER BY n) FROM view_strings"
                          ).fetchall()[0][0]
    con.execute(f"CREATE OR REPLACE TEMP TABLE view_steps_json AS {load_sql('view/report/runs_steps')}")
    runs = con.execute(load_sql("view/report/runs_json")).fetchall()[0][0]
    return f'{{"s":[{_lower_escapes(strings or "")}],"runs":{{{_lower_escapes(runs or "")}}}}}'


def _unordered(query: str) -> str:
    """sql/view/show/steps.sql without its ORDER BY: the report orders the steps where it writes them,
    and sorting every step's whole text first would be a sizeable share of the read."""
    head, order = query.rsplit("ORDER BY", 1)
    assert order.split() == ["s.episode_id,", "s.idx"], order
    return head


def _lower_escapes(text: str) -> str:
    """DuckDB's JSON text with its \\u00XX escapes in lower case, as orjson writes them (the file's
    bytes do not depend on which of the two wrote a string)."""
    if not _ANY_UPPER_ESCAPE.search(text):  # a control character in a trace's text is rare
        return text
    return _UPPER_ESCAPE.sub(lambda m: m.group(0).lower() if m.group(1) else m.group(0), text)


def _table(con: duckdb.DuckDBPyConnection, name: str, columns: dict[str, tuple[str, list[Any]]]) -> None:
    """Temp table `name` from Python lists, a column each (name -> (SQL type, values)), with no
    frame library in between: each list is bound as one JSON document (a list of tens of
    thousands of values binds faster so than as a list) and unnested side by side."""
    import orjson

    select = ", ".join(f"unnest(from_json(${column}, '[\"{kind}\"]')) AS {column}"
                       for column, (kind, _) in columns.items())
    con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS SELECT {select}",
                {column: orjson.dumps(values).decode() for column, (_, values) in columns.items()})


__all__ = ["CLIP", "RunsJson", "read_runs_json", "runs_json"]
