"""One run as data, for `tracelab show` and the HTML report: its header, its steps in order,
and, against a saved check, the results it failed and where.

Against a check, a field that holds a string the check found leaked is withheld: the field
says which string it held, never its text (docs/cli.md §6). Fields are
found the way `must_not_leak` searches (the `transcript` view's fragments, case-insensitive),
and a plain case-insensitive search of the field's stored text besides.
"""
from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

from tracelab.errors import UsageError
from tracelab.sqlfiles import load_sql, run_script

if TYPE_CHECKING:
    import duckdb
    import polars as pl

    from tracelab.store import Store

LEAKED_PREFIX = "LEAKED "
"""A failed must_not_leak result's reason: ``LEAKED "<the string, as JSON>" — ...``."""

_ORIGIN_FIELD = {"step.text": "text", "step.name": "name", "step.error": "error", "step.data": "data",
                 "step.data.key": "data", "input": "input", "output": "output", "error": "error"}
"""Where a transcript fragment comes from (`transcript.origin`) -> the field that is withheld."""

STEP_FIELDS = ("name", "text", "data", "error")
HEAD_FIELDS = ("agent", "agent_version", "model", "case_id", "termination")
"""A run's stored header fields: withheld by the same rule as its text."""
RUN_FIELDS = ("input", "output", "error", *HEAD_FIELDS)


@dataclass(frozen=True)
class Failure:
    """A failed result of a saved check: its case, assertion, reason and step (None: the run as a whole)."""

    case_id: str
    assertion_id: str
    assertion_type: str
    reason: str | None
    step_idx: int | None


@dataclass(frozen=True)
class Step:
    """One step of a run. `data` is JSON text (a call's args, a result's payload).

    `withheld` maps a field name (`name`, `text`, `data`, `error`) to the leaked strings it
    holds; such a field is None here, and renderers say which strings it held instead.
    """

    idx: int
    kind: str
    name: str | None
    status: str | None
    effect: str | None
    text: str | None
    data: str | None
    error: str | None
    duration_ms: float | None
    withheld: dict[str, tuple[str, ...]] = field(default_factory=dict)
    failures: tuple[Failure, ...] = ()
    effect_source: str | None = None
    """Where `effect` comes from, as the check (or the `calls` view) resolved it: suite, step,
    definition or registry."""
    offset_ms: int | None = None
    """Time since the run's first timed step (None: the step has no `ts`)."""
    tokens: int | None = None
    """Tokens the source recorded for the step (None: none recorded)."""

    @property
    def args(self) -> str | None:
        """What the agent sent: a call's or a confirmation's args."""
        return self.data if self.kind in ("tool_call", "confirmation") else None

    @property
    def body(self) -> str | None:
        """What the step says: a message's text, a result's text (else its payload), other data."""
        if self.kind in ("tool_call", "confirmation"):
            return self.text
        return self.text if self.text is not None else self.data


@dataclass(frozen=True)
class Run:
    """A run: header fields, episode-level text, steps, and the failed results of a check."""

    episode_id: str
    agent: str | None
    agent_version: str | None
    model: str | None
    case_id: str | None
    termination: str | None
    reward: float | None
    n_steps: int
    input: str | None
    output: str | None
    error: str | None
    steps: tuple[Step, ...]
    failures: tuple[Failure, ...] = ()
    withheld: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Run fields (`RUN_FIELDS`: its text and header) withheld, with the leaked strings they hold."""
    check_run_id: str | None = None
    checked: bool = False
    """Whether the check (`check_run_id`) has any result for this run."""

    @property
    def failed_steps(self) -> frozenset[int]:
        """The idx of every step some failed result points at."""
        return frozenset(f.step_idx for f in self.failures if f.step_idx is not None)

    @property
    def run_failures(self) -> tuple[Failure, ...]:
        """The failed results about the run as a whole (no step)."""
        return tuple(f for f in self.failures if f.step_idx is None)


def leaked_string(reason: str | None) -> str | None:
    """The string a failed must_not_leak result names (its reason's JSON string), else None."""
    if not reason or not reason.startswith(LEAKED_PREFIX):
        return None
    try:
        value, _ = json.JSONDecoder().raw_decode(reason, len(LEAKED_PREFIX))
    except ValueError:
        return None
    return value if isinstance(value, str) and value else None


def show_run(store: Store | str | os.PathLike[str], episode_id: str, check_run_id: str | None = None) -> Run:
    """One stored run, with the failures of saved check `check_run_id` when given.

    Raises:
        UsageError: no run with that id, or no saved check with that id.
        StoreError: the store cannot be opened.
    """
    from tracelab.store import Store, open_store

    if not isinstance(store, Store):
        with open_store(store, read_only=True, create=False) as opened:
            return show_run(opened, episode_id, check_run_id)
    con = store.con
    failures = None
    needles: tuple[str, ...] = ()
    checked: frozenset[str] = frozenset()
    if check_run_id is not None:
        from tracelab.results.saved import resolve_run

        resolve_run(con, check_run_id)
        failures = saved_failures(con, check_run_id, [episode_id])
        needles = check_leaked_strings(con, check_run_id)
        checked = checked_runs(con, check_run_id, [episode_id])
    runs = load_runs(con, [episode_id], failures=failures, needles=needles, check_run_id=check_run_id,
                     checked=checked)
    if episode_id not in runs:
        raise UsageError(f"no stored run with episode_id {episode_id!r} "
                         "(see `tracelab sql \"SELECT episode_id FROM episodes LIMIT 20\"`)")
    return runs[episode_id]


def saved_failures(con: duckdb.DuckDBPyConnection, run_id: str, episode_ids: Sequence[str]) -> pl.DataFrame:
    """The failed results of saved check `run_id` for these runs (`saved.RESULT_COLUMNS`)."""
    import polars as pl

    from tracelab.results.saved import notable_results, result_columns

    with _shown(con, episode_ids):
        return pl.DataFrame(con.sql(
            f"SELECT {result_columns(con)} FROM {notable_results(con)} WHERE run_id = $run AND NOT passed "
            "AND episode_id IN (SELECT episode_id FROM show_runs) ORDER BY episode_id, case_id, assertion_id",
            params={"run": run_id}))


def resolve_effects(con: duckdb.DuckDBPyConnection, check_run_id: str | None) -> None:
    """Make sql/view/show/steps.sql resolve effects as saved check `check_run_id` did: its suite's
    `tools:` overrides (check_runs.tools, with the patterns the check matched; none without a check,
    or for a check saved without them) over the `calls` view's effect. Temp table `show_overrides`
    and macro `step_tokens`."""
    import orjson

    from tracelab.results.saved import _has_column

    tools: list[dict[str, str]] = []
    if check_run_id is not None and _has_column(con, "check_runs", "tools"):
        rows = con.execute("SELECT tools FROM check_runs WHERE run_id = ?", [check_run_id]).fetchall()
        tools = (rows[0][0] or []) if rows else []
    overrides = [{"pos": pos, "regex": t["regex"], "is_glob": t["is_glob"], "effect": t["effect"]}
                 for pos, t in enumerate(tools)]
    run_script(con, "view/show/overrides", {"overrides": orjson.dumps(overrides).decode()})


def checked_runs(con: duckdb.DuckDBPyConnection, run_id: str, episode_ids: Sequence[str]) -> frozenset[str]:
    """Which of these runs saved check `run_id` has any result for."""
    with _shown(con, episode_ids):
        rows = con.execute("SELECT DISTINCT episode_id FROM check_results WHERE run_id = $run "
                           "AND episode_id IN (SELECT episode_id FROM show_runs)", {"run": run_id}).fetchall()
    return frozenset(row[0] for row in rows)


def check_leaked_strings(con: duckdb.DuckDBPyConnection, run_id: str) -> tuple[str, ...]:
    """Every string saved check `run_id` found leaked, in any run."""
    from tracelab.results.saved import notable_results

    rows = con.execute(f"SELECT DISTINCT reason FROM {notable_results(con)} WHERE run_id = ? AND NOT passed "
                       "AND assertion_type = 'must_not_leak'", [run_id]).fetchall()
    return tuple(sorted({s for (reason,) in rows if (s := leaked_string(reason)) is not None}))


@dataclass(frozen=True)
class RunTable:
    """Runs as frames, for a renderer of thousands of runs (the HTML report) to read set-wise.

    `heads` holds a row per run (sql/view/show/episodes.sql), `steps` a row per step in run order
    (sql/view/show/steps.sql). A field that holds a leaked string is None already; the row's
    `withheld` column is true, and `withheld` maps (run, step idx, None for the run's own
    fields) to the fields withheld and the strings each held.
    """

    heads: pl.DataFrame
    steps: pl.DataFrame
    withheld: dict[tuple[str, int | None], dict[str, tuple[str, ...]]]
    failures: dict[str, tuple[Failure, ...]]
    """The failed results of each run (by episode_id), in `saved_failures` order."""
    check_run_id: str | None = None
    checked: frozenset[str] = frozenset()

    def __len__(self) -> int:
        return self.heads.height


def read_runs(con: duckdb.DuckDBPyConnection, episode_ids: Sequence[str], *,
              failures: pl.DataFrame | None = None, needles: Iterable[str] = (),
              check_run_id: str | None = None, checked: Iterable[str] = ()) -> RunTable:
    """The stored runs among `episode_ids` as a `RunTable`: a few queries whatever their number.

    Args:
        con: a store's connection.
        episode_ids: the runs to read (unknown ids are left out of the result).
        failures: failed result rows (`saved.RESULT_COLUMNS`) to attach to their runs and steps.
        needles: leaked strings: every field of these runs that holds one is withheld.
        check_run_id: the saved check the failures come from.
        checked: the runs the check has results for.
    """
    import polars as pl

    needles = tuple(dict.fromkeys(n for n in needles if n))
    resolve_effects(con, check_run_id)
    with _shown(con, episode_ids):
        heads = _marked(pl.DataFrame(con.sql(load_sql("view/show/episodes"))), RUN_FIELDS, needles)
        steps = _marked(pl.DataFrame(con.sql(load_sql("view/show/steps"))), STEP_FIELDS, needles)
    holding = _holding(con, failures, _found(heads, steps, needles))
    withheld: dict[tuple[str, int | None], dict[str, tuple[str, ...]]] = {}
    heads = _withhold(heads, RUN_FIELDS, holding, needles, withheld)
    steps = _withhold(steps, STEP_FIELDS, holding, needles, withheld)
    by_run: dict[str, list[Failure]] = {}
    if failures is not None:
        for row in failures.iter_rows(named=True):
            by_run.setdefault(row["episode_id"], []).append(Failure(
                row["case_id"], row["assertion_id"], row["assertion_type"], row["reason"], row["step_idx"]))
    return RunTable(heads, steps, withheld, {run: tuple(found) for run, found in by_run.items()},
                    check_run_id, frozenset(checked))


def load_runs(con: duckdb.DuckDBPyConnection, episode_ids: Sequence[str], *,
              failures: pl.DataFrame | None = None, needles: Iterable[str] = (),
              check_run_id: str | None = None, checked: Iterable[str] = ()) -> dict[str, Run]:
    """The stored runs among `episode_ids` as `Run`s, by id (arguments as `read_runs`)."""
    table = read_runs(con, episode_ids, failures=failures, needles=needles, check_run_id=check_run_id,
                      checked=checked)
    step_rows: dict[str, list[dict[str, Any]]] = {}
    for row in table.steps.iter_rows(named=True):
        step_rows.setdefault(row["episode_id"], []).append(row)
    runs: dict[str, Run] = {}
    for head in table.heads.iter_rows(named=True):
        episode_id = head["episode_id"]
        run_failures = table.failures.get(episode_id, ())
        runs[episode_id] = Run(
            episode_id=episode_id, reward=head["reward"], n_steps=head["n_steps"],
            **{name: head[name] for name in RUN_FIELDS},
            steps=tuple(_step(row, table.withheld.get((episode_id, row["idx"]), {}), run_failures)
                        for row in step_rows.get(episode_id, ())),
            failures=run_failures, withheld=table.withheld.get((episode_id, None), {}),
            check_run_id=check_run_id, checked=episode_id in table.checked,
        )
    return runs


def _step(row: dict[str, Any], withheld: dict[str, tuple[str, ...]], failures: tuple[Failure, ...]) -> Step:
    return Step(idx=row["idx"], kind=row["kind"], name=row["name"], status=row["status"], effect=row["effect"],
                text=row["text"], data=row["data"], error=row["error"], duration_ms=row["duration_ms"],
                withheld=withheld, effect_source=row["effect_source"], offset_ms=row["offset_ms"],
                tokens=row["tokens"],
                failures=tuple(f for f in failures if f.step_idx == row["idx"]) if failures else ())


def _withhold(frame: pl.DataFrame, fields: tuple[str, ...],
              holding: dict[tuple[str, int | None], dict[str, set[str]]], needles: tuple[str, ...],
              withheld: dict[tuple[str, int | None], dict[str, tuple[str, ...]]]) -> pl.DataFrame:
    """`frame` (episodes, or steps with their `idx`) with every field that holds a needle set to
    None and a `withheld` column; adds what each such row held to `withheld`.

    Only the rows `_marked` flagged, or where the transcript search located a leak (`holding`),
    are looked at one by one."""
    import polars as pl

    has_idx = "idx" in frame.columns
    frame = frame.with_row_index("_row")
    look = frame.filter(pl.col("_marked"))
    located = [key for key in holding if (key[1] is not None) == has_idx]
    if located:
        at = ["episode_id", "idx"] if has_idx else ["episode_id"]
        keys = pl.DataFrame([key[:len(at)] for key in located], schema=frame.select(at).schema, orient="row")
        look = pl.concat([look, frame.join(keys, on=at, how="semi")]).unique("_row")
    rows: dict[str, list[int]] = {name: [] for name in fields}
    for row in look.iter_rows(named=True):
        key = (row["episode_id"], row["idx"] if has_idx else None)
        found = fields_withheld(row, fields, holding.get(key, {}), needles)
        if found:
            withheld[key] = found
            for name in found:
                rows[name].append(row["_row"])
    held = {row for found in rows.values() for row in found}
    return frame.with_columns(
        *(pl.when(pl.col("_row").is_in(_positions(found))).then(None).otherwise(pl.col(name)).alias(name)
          for name, found in rows.items() if found),
        withheld=pl.col("_row").is_in(_positions(held)),
    ).drop("_row", "_marked")


def _positions(rows: Iterable[int]) -> pl.Series:
    import polars as pl

    return pl.Series(sorted(rows), dtype=pl.UInt32).implode()


def fields_withheld(row: dict[str, Any], fields: tuple[str, ...], holding: dict[str, set[str]],
                    needles: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """Fields of `row` that hold a needle: as the transcript search found (`holding`), or in
    their text, case-insensitively (a JSON document also with its escapes decoded)."""
    if not holding and not row["_marked"]:
        return {}
    out: dict[str, tuple[str, ...]] = {}
    for name in fields:
        found = set(holding.get(name, ()))
        value = row[name]
        if value is not None and row["_marked"]:
            texts = (value.lower(), _decoded(value).lower()) if name == "data" else (value.lower(),)
            found.update(n for n in needles if any(n.lower() in text for text in texts))
        if found:
            out[name] = tuple(sorted(found))
    return out


def _marked(frame: pl.DataFrame, fields: tuple[str, ...], needles: tuple[str, ...]) -> pl.DataFrame:
    """`_marked`: whether some field may hold a needle (case-insensitively, JSON escapes
    decoded), found for all rows at once; `fields_withheld` then looks at those few rows only."""
    import polars as pl

    if not needles or frame.height == 0:
        return frame.with_columns(_marked=pl.lit(False))
    lowered = [n.lower() for n in needles]
    hits = [pl.col(name).str.to_lowercase().str.contains_any(lowered).fill_null(False) for name in fields]
    # a document with an escape (\u00df for ß) may hold a needle only once decoded
    escaped = [pl.col(name).str.contains("\\", literal=True).fill_null(False) for name in fields if name == "data"]
    return frame.with_columns(_marked=pl.any_horizontal(*hits, *escaped))


def _decoded(document: str) -> str:
    """A JSON document's text with its escapes decoded (itself when it has none or is not JSON)."""
    if "\\" not in document:
        return document
    try:
        return json.dumps(json.loads(document), ensure_ascii=False)
    except ValueError:
        return document


def _found(heads: pl.DataFrame, steps: pl.DataFrame, needles: tuple[str, ...]) -> pl.DataFrame:
    """(episode_id, needle): the runs whose stored text shows a needle as it is (case aside).

    Only rows `_marked` can: a needle shown as it is is one of the strings it looked for."""
    import polars as pl

    pairs = [pl.DataFrame(schema={"episode_id": pl.Utf8, "needle": pl.Utf8})]
    marked = [(frame.filter(pl.col("_marked")), fields)
              for frame, fields in ((heads, RUN_FIELDS), (steps, STEP_FIELDS))]
    for needle in needles:
        for frame, fields in marked:
            hit = pl.any_horizontal(pl.col(name).str.to_lowercase().str.contains(needle.lower(), literal=True)
                                    .fill_null(False) for name in fields)
            pairs.append(frame.filter(hit).select("episode_id", needle=pl.lit(needle, pl.Utf8)))
    return pl.concat(pairs).unique()


def _holding(con: duckdb.DuckDBPyConnection, failures: pl.DataFrame | None, found: pl.DataFrame
             ) -> dict[tuple[str, int | None], dict[str, set[str]]]:
    """(run, step idx or None for the episode) -> field -> the strings it holds, for each leak the
    check found in these runs that their stored text does not show as it is (an escape, a number
    written otherwise), located as must_not_leak searched: the transcript. The others are found
    field by field in `fields_withheld`, so the transcript of thousands of runs is not rebuilt."""
    import polars as pl

    if failures is None or failures.height == 0:
        return {}
    leaks = (failures.filter(pl.col("assertion_type") == "must_not_leak")
             .select("episode_id", needle=pl.col("reason").map_elements(leaked_string, return_dtype=pl.Utf8))
             .drop_nulls().unique().join(found, on=["episode_id", "needle"], how="anti"))
    return locate_leaks(con, leaks.rows())


def locate_leaks(con: duckdb.DuckDBPyConnection, leaks: Iterable[tuple[str, str]]
                 ) -> dict[tuple[str, int | None], dict[str, set[str]]]:
    """(run, step idx or None for the episode) -> field -> the strings it holds, for each
    (episode_id, leaked string) of `leaks`, located as must_not_leak searched: the transcript
    (`tracelab.engine.locate`, which imports the suite compiler and Polars: only when needed)."""
    leaks = list(leaks)
    if not leaks:
        return {}
    import polars as pl

    from tracelab.engine.locate import leak_fragments

    frame = pl.DataFrame(leaks, schema={"episode_id": pl.Utf8, "needle": pl.Utf8}, orient="row")
    found = leak_fragments(con, frame.with_columns(unit_id=pl.lit(0, pl.Int64)))
    out: dict[tuple[str, int | None], dict[str, set[str]]] = {}
    for row in found.iter_rows(named=True):
        fields = out.setdefault((row["episode_id"], row["step_idx"]), {})
        fields.setdefault(_ORIGIN_FIELD[row["origin"]], set()).add(row["needle"])
    return out


class _shown:
    """`show_runs(episode_id)` registered on the connection while a query reads it."""

    def __init__(self, con: duckdb.DuckDBPyConnection, episode_ids: Sequence[str]) -> None:
        self.con = con
        import polars as pl

        self.frame = pl.DataFrame({"episode_id": list(dict.fromkeys(episode_ids))}, schema={"episode_id": pl.Utf8})

    def __enter__(self) -> None:
        from tracelab.frames import ArrowStream

        self.con.register("show_runs", ArrowStream(self.frame))

    def __exit__(self, *exc: object) -> None:
        self.con.unregister("show_runs")


FIELD_LABELS = {"data": "args/data", "text": "text", "error": "error", "name": "name", "input": "input",
                "output": "output", "case_id": "case", "agent_version": "version"}


def withheld_notice(strings: Iterable[str], field: str | None = None) -> str:
    """What a renderer writes in place of a withheld field: which leaked strings it holds."""
    return _notice(tuple(strings), field)


@cache
def _notice(strings: tuple[str, ...], field: str | None) -> str:
    from tracelab.engine.needles import notice

    return notice(strings, FIELD_LABELS.get(field, field) if field else None)


__all__ = ["HEAD_FIELDS", "RUN_FIELDS", "Failure", "Run", "RunTable", "Step", "check_leaked_strings",
           "checked_runs", "leaked_string", "fields_withheld", "load_runs", "locate_leaks", "read_runs",
           "resolve_effects", "saved_failures", "show_run", "withheld_notice"]
