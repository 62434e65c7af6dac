"""The failing runs a report holds, with their steps, as the JSON its script reads (report.js).

Everything is done set-wise in DuckDB, where the steps are: their texts picked and clipped, the
strings numbered in order of first use and each run's steps written as JSON (sql/view/runs_*.sql).
Python decides only what holds a leaked string (`tracelab.show`'s rules, on the few fields that
may hold one) and writes each run's own few fields. Neither Polars nor the suite compiler is
imported, unless a leak must be located in the transcript (`show.locate_leaks`, rare).
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tracelab.show import RUN_FIELDS, STEP_FIELDS, Failure, _withheld, leaked_string, locate_leaks, withheld_notice
from tracelab.sqlfiles import load_sql, run_script

if TYPE_CHECKING:
    import duckdb

CLIP = 240
"""Characters of a step's args or text the file holds; the rest is `tracelab show --full`."""
NOTICED = ("data", "text", "error", "name")
"""A step's fields with a notice when withheld (the first three among its content, `name` as its tool)."""
LAST = 1 << 30
"""Where a step's kind, status and effect come among its strings: after all its failures'."""
HEAD_COLUMNS = ("episode_id", "agent", "agent_version", "model", "case_id", "termination", "reward", "n_steps",
                *RUN_FIELDS)
_UPPER_ESCAPE = re.compile(r"\\(?:u00([0-9A-F]{2})|.)")
_ANY_UPPER_ESCAPE = re.compile(r"\\u00[0-9a-fA-F]?[A-F]")


@dataclass(frozen=True)
class RunsJson:
    """The runs a report holds: how many, and the JSON text its script reads."""

    count: int
    text: str

    def __len__(self) -> int:
        return self.count


def read_runs_json(con: duckdb.DuckDBPyConnection, run_id: str, episode_ids: Sequence[str],
                   needles: Iterable[str]) -> tuple[RunsJson, list[dict[str, Any]]]:
    """The runs `episode_ids` as a report writes them, and the failed results of saved check
    `run_id` for them (`saved.RESULT_COLUMNS` as dicts, by run, case and assertion).

    Every field holding one of `needles` (the strings the check found leaked) is withheld.
    """
    from tracelab.saved import result_columns

    needles = tuple(dict.fromkeys(n for n in needles if n))
    _table(con, "show_runs", {"episode_id": ("VARCHAR", list(dict.fromkeys(episode_ids)))})
    try:
        cursor = con.execute(f"SELECT {result_columns(con)} FROM check_results WHERE run_id = $run AND NOT passed "
                             "AND episode_id IN (SELECT episode_id FROM show_runs) "
                             "ORDER BY episode_id, case_id, assertion_id", {"run": run_id})
        names = [column[0] for column in cursor.description]
        failures = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
        heads = [dict(zip(HEAD_COLUMNS, row, strict=True)) for row in con.execute(load_sql("show/episodes")).fetchall()]
        _table(con, "view_runs", {"episode_id": ("VARCHAR", [head["episode_id"] for head in heads]),
                                  "run": ("BIGINT", list(range(len(heads))))})
        con.execute(f"CREATE OR REPLACE TEMP VIEW view_shown_steps AS {_unordered(load_sql('show/steps'))}")
        run_script(con, "view/runs_read", {"needles": list(needles), "clip": CLIP})
        by_run: dict[str, list[Failure]] = {}
        for row in failures:
            by_run.setdefault(row["episode_id"], []).append(Failure(
                row["case_id"], row["assertion_id"], row["assertion_type"], row["reason"], row["step_idx"]))
        withheld, steps = _withhold(con, heads, needles, failures)
        text = runs_json(con, heads, withheld, steps, {run: tuple(found) for run, found in by_run.items()})
    finally:
        run_script(con, "view/runs_cleanup")
    return RunsJson(len(heads), text), failures


Withheld = dict[tuple[str, "int | None"], dict[str, tuple[str, ...]]]
"""(run, step idx or None for the run's own fields) -> field -> the leaked strings it holds."""


def _withhold(con: duckdb.DuckDBPyConnection, heads: list[dict[str, Any]], needles: tuple[str, ...],
              failures: list[dict[str, Any]]) -> tuple[Withheld, dict[tuple[str, int], dict[str, Any]]]:
    """What holds a leaked string, decided as `tracelab.show` does (`_withheld`) on the fields that
    may hold one: the steps sql/view/runs_read.sql marked (a superset of show's `_marked`), the
    runs' own fields that hold one (case aside), and those the transcript search locates.

    Returns the withheld fields, and the whole rows (kind and fields) of the steps that have one.
    A run's own withheld fields are set to None in `heads`."""
    if not needles:
        return {}, {}
    lowered = [n.lower() for n in needles]
    marked: dict[tuple[str, int | None], dict[str, Any]] = {}
    for head in heads:
        if any(n in value.lower() for name in RUN_FIELDS if (value := head[name]) is not None for n in lowered):
            marked[(head["episode_id"], None)] = {**head, "_marked": True}
    columns = ("episode_id", "idx", "kind", *STEP_FIELDS)
    for row in con.execute(f"SELECT {', '.join(columns)} FROM view_steps WHERE marked").fetchall():
        marked[(row[0], row[1])] = {**dict(zip(columns, row, strict=True)), "_marked": True}
    # a leak the stored text shows as it is (case aside) is found field by field below; the
    # others (an escape, a number written otherwise) are located in the transcript
    found = {(row["episode_id"], needle) for (_, idx), row in marked.items()
             for needle in needles
             if any(needle.lower() in value.lower()
                    for name in (STEP_FIELDS if idx is not None else RUN_FIELDS)
                    if (value := row[name]) is not None)}
    leaks = dict.fromkeys((row["episode_id"], needle) for row in failures if row["assertion_type"] == "must_not_leak"
                          and (needle := leaked_string(row["reason"])) is not None)
    holding = locate_leaks(con, [pair for pair in leaks if pair not in found])
    located = [key for key in holding if key not in marked]
    if located:
        by_key: dict[tuple[str, int | None], dict[str, Any]] = {(head["episode_id"], None): head for head in heads}
        steps = [key for key in located if key[1] is not None]
        _table(con, "view_located", {"episode_id": ("VARCHAR", [key[0] for key in steps]),
                                     "idx": ("INTEGER", [key[1] for key in steps])})
        rows = con.execute(f"SELECT {', '.join(f's.{c}' for c in columns)} FROM view_shown_steps s "
                           "JOIN view_located USING (episode_id, idx)").fetchall()
        by_key |= {(row[0], row[1]): dict(zip(columns, row, strict=True)) for row in rows}
        marked |= {key: {**by_key[key], "_marked": False} for key in located if key in by_key}
    withheld: Withheld = {}
    steps_held: dict[tuple[str, int], dict[str, Any]] = {}
    heads_by_id = {head["episode_id"]: head for head in heads}
    for key, row in marked.items():
        step = key[1] is not None
        held = _withheld(row, STEP_FIELDS if step else RUN_FIELDS, holding.get(key, {}), needles)
        if not held:
            continue
        withheld[key] = held
        if step:
            steps_held[key] = row  # type: ignore[index]
        else:
            for name in held:
                heads_by_id[key[0]][name] = None
    return withheld, steps_held


def _shown_step(row: dict[str, Any], held: dict[str, tuple[str, ...]]) -> tuple[Any, ...]:
    """What a step with withheld fields shows, as sql/view/runs_read.sql writes a step (its
    withheld fields None): notices of data, text and error, tool, then each text clipped with
    how many more characters it had."""
    name, text, data, error = (None if field in held else row[field] for field in ("name", "text", "data", "error"))
    call = row["kind"] in ("tool_call", "confirmation")
    sent = data if call else None
    said = text if call else (text if text is not None else data)
    notices = tuple(withheld_notice(held[field], field) if field in held else None for field in NOTICED)
    clipped: list[Any] = []
    for value in (sent, said, error):
        value = value or None  # an empty text shows nothing
        clipped += [None, None] if value is None else [value[:CLIP], len(value) - CLIP if len(value) > CLIP else None]
    return (*notices[:3], notices[3] if notices[3] is not None else name, *clipped)


def runs_json(con: duckdb.DuckDBPyConnection, heads: list[dict[str, Any]], withheld: Withheld,
              steps: dict[tuple[str, int], dict[str, Any]], failures: dict[str, tuple[Failure, ...]]) -> str:
    """The runs as the script reads them, as JSON: {"s": [strings], "runs": {id: run}}; every
    text of a run is a position in "s", numbered in order of first use (see report.js).

    Args:
        con: a connection with temp tables `view_runs` (each run's place) and `view_steps`
            (sql/view/runs_read.sql: what each step of these runs shows).
        heads: a row per run, in their order (sql/show/episodes.sql), withheld fields None already.
        withheld: the fields withheld, with the leaked strings each holds (`_withhold`).
        steps: the whole rows of the steps with a withheld field (kind and fields).
        failures: the failed results of each run, in the order their step's strings number them.
    """
    import orjson

    runs = {head["episode_id"]: run for run, head in enumerate(heads)}
    owners = [(head, withheld.get((head["episode_id"], None), {}), failures.get(head["episode_id"], ()))
              for head in heads]
    own: dict[str, tuple[int, int]] = {}  # each run's own texts: the (run, place) of each one's first use
    for run, owner in enumerate(owners):
        def use(value: str, run: int = run) -> None:
            own.setdefault(value, (run, len(own)))

        own_fields(*owner, use)
    shown = [(*key, *_shown_step(row, withheld[key])) for key, row in steps.items()]
    failed = [(episode_id, f.step_idx, 7 + 2 * k, f.assertion_id, f.reason)
              for episode_id, found in failures.items() if episode_id in runs
              for k, f in enumerate(f for f in found if f.step_idx is not None)]
    _table(con, "view_own", {"run": ("BIGINT", [run for run, _ in own.values()]),
                             "slot": ("BIGINT", [slot for _, slot in own.values()]), "value": ("VARCHAR", list(own))})
    _table(con, "view_withheld", {name: (kind, [row[i] for row in shown]) for i, (name, kind) in enumerate((
        ("episode_id", "VARCHAR"), ("idx", "INTEGER"), ("w_data", "VARCHAR"), ("w_text", "VARCHAR"),
        ("w_error", "VARCHAR"), ("tool", "VARCHAR"), ("sent", "VARCHAR"), ("more_sent", "BIGINT"),
        ("said", "VARCHAR"), ("more_said", "BIGINT"), ("err", "VARCHAR"), ("more_err", "BIGINT")))})
    _table(con, "view_failed", {name: (kind, [row[i] for row in failed]) for i, (name, kind) in enumerate(
        (("episode_id", "VARCHAR"), ("idx", "INTEGER"), ("slot", "BIGINT"), ("assertion", "VARCHAR"),
         ("reason", "VARCHAR")))})
    run_script(con, "view/runs_strings", {"last": LAST})
    strings = con.execute("SELECT string_agg(to_json(value)::VARCHAR, ',' ORDER BY n) FROM view_strings"
                          ).fetchall()[0][0]
    by_run = dict(con.execute(load_sql("view/runs_steps")).fetchall())
    numbers = dict(zip(own, con.execute("SELECT list(s.n ORDER BY o.slot) FROM view_own o JOIN view_strings s "
                                        "USING (value)").fetchall()[0][0] or [], strict=True))
    text = [b'{"s":[', _lower_escapes(strings or "").encode(), b'],"runs":{']
    for run, owner in enumerate(owners):
        head, whole, tail = own_fields(*owner, numbers.__getitem__)
        text += [b"," if run else b"", orjson.dumps(owner[0]["episode_id"]), b':{"head":', orjson.dumps(head),
                 b',"whole":', orjson.dumps(whole), b',"steps":[', by_run.get(run, "").encode(),
                 b'],"tail":', orjson.dumps(tail), b"}"]
    return b"".join([*text, b"}}"]).decode()


def own_fields(head: dict[str, Any], withheld: dict[str, tuple[str, ...]], failures: tuple[Failure, ...],
               s: Callable[[str], Any]) -> tuple[list[Any], list[Any], list[Any]]:
    """A run's header, its failures as a whole, and its output and error, each text numbered by `s`
    in the order the file numbers them (None stays None)."""
    def n(value: str | None) -> Any:
        return None if value is None else s(value)

    reward = None if head["reward"] is None else f"{head['reward']:g}"
    rows = [[n(label), n(value)] for label, value in (
        ("agent", head["agent"]), ("version", head["agent_version"]), ("model", head["model"]),
        ("case", head["case_id"]), ("termination", head["termination"]), ("reward", reward),
        ("steps", str(head["n_steps"])))]
    tail = []
    for name in ("output", "error"):
        value = head[name]
        if name in withheld:
            tail.append([n(name), [{"w": n(withheld_notice(withheld[name], name))}]])
        elif value:
            label, clipped = n(name), [n(value[:CLIP])]
            tail.append([label, clipped if len(value) <= CLIP else [*clipped, {"c": len(value) - CLIP}]])
    whole = [[n(f.assertion_id), n(f.reason)] for f in failures if f.step_idx is None]
    return rows, whole, tail


def _unordered(query: str) -> str:
    """sql/show/steps.sql without its ORDER BY: the report orders the steps where it writes them,
    and sorting every step's whole text first costs a tenth of the read."""
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
    thousands of values binds several times faster so than as a list) and unnested side by side."""
    import orjson

    select = ", ".join(f"unnest(from_json(${column}, '[\"{kind}\"]')) AS {column}"
                       for column, (kind, _) in columns.items())
    con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS SELECT {select}",
                {column: orjson.dumps(values).decode() for column, (_, values) in columns.items()})


__all__ = ["CLIP", "RunsJson", "own_fields", "read_runs_json", "runs_json"]
