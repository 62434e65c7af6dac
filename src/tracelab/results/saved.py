"""Saved checks: the `check_runs` and `check_results` rows a check wrote, read back.

`show --check` and `view` read them; so does `check --since`. A store written before a
column existed (`check_results.step_idx`: `store.ADDED_COLUMNS`) gains it when opened
(`store._upgrade`); a file that cannot be written reads the missing column as NULL.

With them a check saves the few rows `tracelab view` shows (`VIEW_TABLES`: per case, its first
failing runs, per assertion, the reasons results were not exercised; `check_runs.runs` and
`runs_failed`),
so that the report reads a few hundred rows rather than grouping every result again. A check
saved before they existed has none (`runs` is NULL): the report then computes them the same way
(`view_rows`), from its check_results read back (`read_result`). `check --engine spark` saves them
too, aggregated by its tasks (tracelab.results.summaries), as Delta tables the store reads as views.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tracelab.engine.columns import RESULT_COLUMNS
from tracelab.errors import UsageError
from tracelab.sqlfiles import load_sql

if TYPE_CHECKING:
    from datetime import datetime

    import duckdb
    import polars as pl

    from tracelab.engine.evaluate import Carried
    from tracelab.engine.verdicts import CheckResult

VIEW_TABLES = ("check_cases", "check_failing_runs", "check_assertions", "check_reasons")
"""What a check saves for `tracelab view` besides its results (sql/store/schema/<table>.sql)."""
REASONS_SAVED = 5
"""Not-exercised reasons saved per assertion, most frequent first."""
SAMPLE_RUNS = 10
"""Run ids saved with each not-exercised reason (the first by id)."""
FAILING_RUNS_SAVED = 200
"""Failing runs saved per case (the first by id of those that crossed a permission boundary, and as
many of the others): `view --max-runs` up to this many reads them."""


def result_columns(con: duckdb.DuckDBPyConnection) -> str:
    """The SELECT list of `RESULT_COLUMNS` over `check_results`, NULL for a column the store lacks."""
    from tracelab.store import ADDED_COLUMNS

    added = ADDED_COLUMNS["check_results"]
    present = {row[0] for row in con.execute(
        "SELECT column_name FROM duckdb_columns() WHERE table_name = 'check_results' AND NOT internal"
    ).fetchall()}
    return ", ".join(name if name in present or name not in added else f"NULL::{added[name]} AS {name}"
                     for name in RESULT_COLUMNS)


@dataclass(frozen=True)
class CaseRuns:
    """A case of a saved check and how many runs it selected (what `view_rows` reads of a `CaseVerdict`)."""

    id: str
    runs: int


@dataclass(frozen=True)
class SavedResult:
    """A saved check's results read back from check_results (`read_result`), with what `view_rows`
    and `runs_failed` read of a `CheckResult`."""

    notable: pl.DataFrame
    """The rows that are not plain passes, as `CheckResult.notable`."""
    units: pl.DataFrame
    """(case_id, assertion_id, assertion_type) in the order the rows came, as `CheckResult.units`."""
    cases: tuple[CaseRuns, ...]
    """The cases with results; a case's runs are the distinct runs with results of it."""
    per_run: pl.DataFrame
    """`runs_of_cases` of the notable rows, as `CheckResult.per_run`."""
    runs: int
    """The distinct runs with results (`Summary.runs`)."""
    runs_failed: int
    """Of those, the runs that failed a result of a case selecting them (`CheckResult.runs_failed`)."""


def read_result(con: duckdb.DuckDBPyConnection, run_id: str) -> SavedResult:
    """Saved check `run_id`'s results (`saved_results`), with what `view_rows` reads of them."""
    from tracelab.engine.verdicts import runs_of_cases

    notable, selection, units = saved_results(con, run_id)
    cases = tuple(CaseRuns(case_id, runs) for case_id, runs in selection.group_by("case_id", maintain_order=True)
                  .len().iter_rows())
    per_run = runs_of_cases(notable)
    return SavedResult(notable, units, cases, per_run, selection["episode_id"].n_unique(),
                       _failing(per_run)["episode_id"].n_unique())


def saved_results(con: duckdb.DuckDBPyConnection, run_id: str, case_ids: list[str] | None = None,
                  since: datetime | None = None) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """Saved check `run_id`'s notable rows, selection and units (as `CheckResult` holds them), of the
    cases `case_ids` (None: all) and, with `since`, of the runs not (re-)ingested after it (what
    `check --since` keeps): from the store's check_exceptions, check_selected and
    check_assertions (sql/results/saved/), or, where check_results is stored row by row
    (`compact_results`), from its rows as scanned: a Parquet store's check_results (a view over
    check_results/, `check --engine spark`) has no rowid, and a check wrote them by assertion."""
    import polars as pl

    from tracelab.engine.verdicts import RESULT_SCHEMA, compact

    if compact_results(con):
        # each check of the chain in turn (a `check --since` run: the rows it keeps, then its own)
        chain = (con.execute(load_sql("results/saved/chain"), {"run": run_id}).fetchall()
                 if _has_table(con, "check_carried") else [(run_id, 0)])
        notable = pl.concat([_written(con, "notable", run_id, case_ids, since, source, depth)
                             for source, depth in chain], how="vertical_relaxed").cast(RESULT_SCHEMA)
        selection = pl.concat([_written(con, "selected", run_id, case_ids, since, source, depth)
                               for source, depth in chain], how="vertical_relaxed")
        units = pl.DataFrame(con.sql(load_sql("results/saved/units"), params={"run": run_id}))
        if case_ids is not None:
            units = units.filter(pl.col("case_id").is_in(case_ids))
        return notable, selection, units
    return compact(pl.DataFrame(con.sql(
        f"SELECT {result_columns(con)} FROM check_results "
        "WHERE run_id = $run AND ($cases IS NULL OR list_contains($cases, case_id)) AND ($since IS NULL OR "
        "episode_id NOT IN (SELECT episode_id FROM episodes WHERE ingested_at > $since))",
        params={"run": run_id, "cases": case_ids, "since": since})))


def _written(con: duckdb.DuckDBPyConnection, name: str, run_id: str, case_ids: list[str] | None,
             since: datetime | None, source: str, depth: int) -> pl.DataFrame:
    """The rows of sql/results/saved/<name>.sql that check `source` wrote, `depth` steps up the chain
    of check `run_id`: all of them at depth 0, else those `run_id` keeps (<name>_kept.sql)."""
    import polars as pl

    params = {"source": source, "cases": case_ids, "since": since}
    if depth == 0:
        return pl.DataFrame(con.sql(load_sql(f"results/saved/{name}"), params=params))
    return pl.DataFrame(con.sql(load_sql(f"results/saved/{name}_kept"), params={**params, "run": run_id,
                                                                                 "depth": depth}))


def compact_results(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the store keeps its results compact (`check_exceptions`, `check_selected`: a store
    written or opened for writing by this tracelab), rather than row by row in a `check_results`
    table (a read-only store of an earlier one) or dataset (a Parquet or Delta store)."""
    return bool(con.execute("SELECT count(*) = 2 FROM duckdb_tables() WHERE NOT temporary "
                            "AND table_name IN ('check_exceptions', 'check_selected')").fetchall()[0][0])


def notable_results(con: duckdb.DuckDBPyConnection) -> str:
    """The relation that holds every saved result that is not a plain pass (failures among them),
    with check_results' columns: `check_exceptions`, or check_results itself where it is stored
    row by row (`compact_results`)."""
    if not compact_results(con):
        return "check_results"
    return "check_notable_results" if _has_table(con, "check_carried") else "check_exceptions"


def saved_rows(con: duckdb.DuckDBPyConnection, run_id: str, case_ids: list[str], since: datetime) -> Carried:
    """What saved check `run_id` found for these cases and the runs not (re-)ingested after `since`
    (`check --since` carries it over)."""
    from tracelab.engine.evaluate import Carried

    notable, selection, _ = saved_results(con, run_id, case_ids, since)
    return Carried(notable, selection)


def view_rows(result: CheckResult | SavedResult, failing_runs: int | None = None) -> dict[str, pl.DataFrame]:
    """The rows of `VIEW_TABLES` for a check's result (run_id aside): what `tracelab check` saves
    for `tracelab view`, and what the report computes from check_results (`read_result`) for a
    check saved without them. `failing_runs` is how many failing runs per case are kept, among
    those that crossed a permission boundary and as many of the others (`FAILING_RUNS_SAVED` when None).

    Each is found from the (case, run) pairs the check grouped already (`CheckResult.per_run`), the
    notable rows, or a case's runs times its results: small next to the evaluation itself,
    whatever the corpus size. `pos` numbers the rows as check_results lists them: by assertion,
    in the suite's order.
    """
    import polars as pl

    kept = FAILING_RUNS_SAVED if failing_runs is None else failing_runs
    failing = _failing(result.per_run).lazy()
    exercised = pl.col("exercised")
    not_yes = result.notable.lazy().filter(~pl.col("passed") | (exercised != "yes"))
    # one query plan: its parts run side by side (as in engine.verdicts.summarize)
    per_case_rows, firsts, counts, reasons = pl.collect_all([
        failing.group_by("case_id").agg(
            runs_failed=pl.len(), failed=pl.col("failed").sum(), permission=pl.col("permission").any()),
        # a case's first failing runs in the report's order (sql/view/report/failing_runs_saved.sql): among
        # the first of those that crossed a permission boundary and of the others, by id (no sort of them all)
        failing.group_by("case_id").agg(
            crossed=pl.col("episode_id").filter(pl.col("permission")).bottom_k(kept),
            others=pl.col("episode_id").filter(~pl.col("permission")).bottom_k(kept)),
        not_yes.group_by("case_id", "assertion_id").agg(
            failed=(~pl.col("passed")).sum().cast(pl.Int64), no=(exercised == "no").sum().cast(pl.Int64),
            unknown=(exercised == "unknown").sum().cast(pl.Int64)),
        not_yes.filter(exercised == "no")
        .group_by("case_id", "assertion_id", "reason")
        .agg(runs=pl.len().cast(pl.Int64), sample=pl.col("episode_id").sort().head(SAMPLE_RUNS))
        .sort("case_id", "assertion_id", "runs", "reason", descending=[False, False, True, False], nulls_last=True)
        .group_by("case_id", "assertion_id", maintain_order=True).head(REASONS_SAVED),
    ])
    per_case = {row["case_id"]: row for row in per_case_rows.iter_rows(named=True)}
    none = {"runs_failed": 0, "failed": 0, "permission": False}
    cases = pl.DataFrame(
        [(case.id, case.runs, case.runs - counts["runs_failed"], counts["failed"], bool(counts["permission"]))
         for case in result.cases if case.runs for counts in (per_case.get(case.id, none),)],
        schema={"case_id": pl.Utf8, "runs": pl.Int64, "runs_passed": pl.Int64, "failed": pl.Int64,
                "permission": pl.Boolean}, orient="row")
    shown = pl.concat([firsts.select("case_id", episode_id=column, permission=pl.lit(crossed)).explode("episode_id")
                       for column, crossed in (("crossed", True), ("others", False))]).drop_nulls("episode_id")
    # each assertion of a case with runs: as many results as the case selected runs
    runs = pl.DataFrame([(case.id, case.runs) for case in result.cases if case.runs],
                        schema={"case_id": pl.Utf8, "runs": pl.Int64}, orient="row")
    assertions = (result.units.join(runs, on="case_id", how="inner", maintain_order="left")
                  .with_columns(pos=pl.col("runs").cum_sum() - pl.col("runs"))
                  .join(counts, on=["case_id", "assertion_id"], how="left", maintain_order="left")
                  .with_columns(pl.col("failed", "no", "unknown").fill_null(0))
                  .select("case_id", "assertion_id", "assertion_type", "pos", "runs",
                          passed=pl.col("runs") - pl.col("failed"),
                          yes=pl.col("runs") - pl.col("no") - pl.col("unknown"), no="no", unknown="unknown"))
    return {"check_failing_runs": shown, "check_cases": cases, "check_assertions": assertions,
            "check_reasons": reasons}


def _failing(per_run: pl.DataFrame) -> pl.DataFrame:
    """The (case, run) pairs of `per_run` (`runs_of_cases`) with a failed result: how many, and
    whether one crossed a permission boundary."""
    import polars as pl

    return per_run.filter(pl.col("failed") > 0).select("case_id", "episode_id", "failed", "permission")


def has_view_rows(con: duckdb.DuckDBPyConnection, run_id: str) -> bool:
    """Whether saved check `run_id` has the rows `tracelab view` reads (`VIEW_TABLES`)."""
    present = {row[0] for row in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE table_name = ANY($names) AND NOT temporary "
        "UNION SELECT view_name FROM duckdb_views() WHERE view_name = ANY($names) AND NOT temporary",
        {"names": list(VIEW_TABLES)}).fetchall()}
    if present != set(VIEW_TABLES):
        return False  # a read-only store written before they existed, or a Parquet store without them
    # a check saved with them has its numbers of runs (check_runs), and a case row if it had runs
    return bool(con.execute(
        "SELECT count(*) FROM check_runs WHERE run_id = $run AND runs IS NOT NULL AND runs_failed IS NOT NULL "
        "AND (runs = 0 OR EXISTS (SELECT 1 FROM check_cases WHERE run_id = $run))", {"run": run_id}).fetchall()[0][0])


def failed_cases(con: duckdb.DuckDBPyConnection, run_id: str) -> list[str] | None:
    """The cases saved check `run_id` failed; None when the check was saved without them."""
    if not _has_column(con, "check_runs", "failed_cases"):
        return None
    rows = con.execute("SELECT failed_cases FROM check_runs WHERE run_id = ?", [run_id]).fetchall()
    return None if not rows or rows[0][0] is None else list(rows[0][0])


def _has_table(con: duckdb.DuckDBPyConnection, table: str) -> bool:
    """Whether the store has `table` (a read-only store of an earlier tracelab may lack one)."""
    return bool(con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = ? AND NOT temporary",
                            [table]).fetchall()[0][0])


def _has_column(con: duckdb.DuckDBPyConnection, table: str, column: str) -> bool:
    return bool(con.execute("SELECT count(*) FROM duckdb_columns() WHERE table_name = ? AND column_name = ? "
                            "AND NOT internal", [table, column]).fetchall()[0][0])


def has_saved_checks(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the store has `check_runs` at all: a table in a DuckDB store; in a Parquet store,
    a view over `check_runs/`, there once `check --engine spark` saved a check (else absent)."""
    return bool(con.execute(
        "SELECT (SELECT count(*) FROM duckdb_tables() WHERE table_name = 'check_runs' AND NOT temporary) "
        "+ (SELECT count(*) FROM duckdb_views() WHERE view_name = 'check_runs' AND NOT temporary)"
    ).fetchall()[0][0])


def resolve_run(con: duckdb.DuckDBPyConnection, run_id: str | None) -> tuple[str, str | None, int | None]:
    """(run_id, suite name, elapsed_ms) of a saved check: `run_id`, or the latest when None.

    Raises:
        UsageError: no saved check at all, or none with that id.
    """
    if not has_saved_checks(con):
        raise UsageError("this store holds no saved check; run `tracelab check SUITE` first")
    if run_id is None:
        rows = con.execute("SELECT run_id, suite, elapsed_ms FROM check_runs "
                           "ORDER BY started_at DESC NULLS LAST, run_id LIMIT 1").fetchall()
        if not rows:
            raise UsageError("this store holds no saved check; run `tracelab check SUITE` first")
    else:
        rows = con.execute("SELECT run_id, suite, elapsed_ms FROM check_runs WHERE run_id = ?",
                           [run_id]).fetchall()
        if not rows:
            raise UsageError(f"no saved check run {run_id!r} "
                             "(see `tracelab sql \"SELECT run_id, suite, started_at FROM check_runs\"`)")
    found, suite, elapsed_ms = rows[0]
    return found, suite, elapsed_ms


__all__ = ["FAILING_RUNS_SAVED", "RESULT_COLUMNS", "VIEW_TABLES", "CaseRuns", "SavedResult", "compact_results",
           "failed_cases", "has_saved_checks", "has_view_rows", "notable_results", "read_result", "resolve_run",
           "result_columns", "saved_results", "saved_rows", "view_rows"]
