"""Exercise coverage across the corpus, and `lint` with the store's evidence.

Coverage says, per case and assertion, how many of its selected runs could have
failed it (docs/suites.md §5): `exercised = yes`, `no` (with the engine's reason) or
`unknown`. It is computed from the verdict frame of one evaluation, with Polars
group-bys: never a query per assertion, so `cover` costs about what `check` costs.

Status of an assertion, in the order `cover` lists them:

- `never_exercised`: it has runs and every one is `exercised = no`;
- `no_runs`: its case selects no run, so nothing checked it;
- `rarely_exercised`: `exercised = yes` in under `RARE` (10%) of its runs;
- `exercised`: the rest.

The notebook helpers (`coverage_matrix`, `pass_rate_by`, `not_exercised_reasons`,
`leaks`, `executed_writes`) turn a verdict frame into the tables it plots.
"""
from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

import polars as pl

from tracelab.errors import UsageError
from tracelab.results.report import printable
from tracelab.words import plural

if TYPE_CHECKING:
    from tracelab.results.check import CheckRun
    from tracelab.store import Store
    from tracelab.suite import Finding

RARE = 0.10
"""An assertion exercised in fewer than this share of its runs is listed as rarely exercised."""

STATUSES = ("never_exercised", "no_runs", "rarely_exercised", "exercised")
"""Coverage statuses; `cover` lists the first two first, then the third, then the rest."""

_RANK = {"never_exercised": 0, "no_runs": 0, "rarely_exercised": 1, "exercised": 2}

REASONS_SHOWN = 5
"""Not-exercised reasons per assertion in the text report; JSON lists them all."""

GROUP_COLUMNS = ("agent", "agent_version", "model", "case_id", "termination", "source_format")
"""The `episodes` columns `pass_rate_by` groups on."""

_REASON = pl.Struct({"reason": pl.Utf8, "runs": pl.UInt32})


@dataclass(frozen=True)
class Coverage:
    """What `tracelab cover` shows, for one check: `Coverage(run)` of a check already run (no
    second evaluation), or `cover(store, suite)`, which runs one.

    Attributes:
        run: the (unsaved) check whose verdict rows the table aggregates.
    """

    run: CheckRun

    @cached_property
    def table(self) -> pl.DataFrame:
        """One row per case and assertion: counts, exercised rate, status, grouped reasons.

        Columns: case_id, category, assertion_id, assertion_type, runs, passed, failed,
        exercised_yes, exercised_no, exercised_unknown, exercised_rate (yes / runs; null
        without runs), status (`STATUSES`), not_exercised_reasons (list of {reason, runs},
        most frequent first). Rows: never exercised and unchecked first, then rarely
        exercised, then the rest; suite order within each.
        """
        return _table(self.run)

    @cached_property
    def findings(self) -> tuple[Finding, ...]:
        """The static sweep's findings (docs/suites.md §6): `cover` measures anyway."""
        from tracelab.suite import lint_suite

        return tuple(lint_suite(self.run.suite))

    def summary(self) -> dict[str, int]:
        """Counts of cases, runs, and assertions per status."""
        statuses = self.table["status"]
        return {
            "cases": len(self.run.result.cases),
            "cases_without_runs": sum(case.runs == 0 for case in self.run.result.cases),
            "runs": self.run.result.summary.runs,
            "assertions": self.table.height,
            **{status: int((statuses == status).sum()) for status in STATUSES},
        }

    def to_json_dict(self, suite_path: str | os.PathLike[str]) -> dict[str, Any]:
        """The `cover --format json` document."""
        from tracelab.version import __version__

        run = self.run
        return {
            "tracelab_version": __version__,
            "suite": run.suite.name,
            "suite_path": str(suite_path),
            "suite_sha256": run.suite.sha256,
            "store": run.store,
            "elapsed_ms": run.elapsed_ms,
            "rare_threshold": RARE,
            "summary": self.summary(),
            "static_findings": len(self.findings),
            "assertions": [_json_row(row) for row in self.table.iter_rows(named=True)],
        }

    def render_text(self, full: bool = True) -> str:
        """A readable table: never exercised (and unchecked) first, then rarely, then the rest
        (`full=False` leaves the well-exercised ones out, with a count)."""
        s = self.summary()
        lines = [f"{printable(self.run.suite.name)}: exercise coverage of {plural(s['assertions'], 'assertion')} "
                 f"in {plural(s['cases'], 'case')} over {plural(s['runs'], 'run')}"]
        widths = _widths(self.table)
        groups = (
            (("never_exercised", "no_runs"), "never exercised: no selected run could have failed these"),
            (("rarely_exercised",), f"exercised in under {RARE:.0%} of their runs"),
            (("exercised",), "exercised"),
        )
        for statuses, title in groups if full else groups[:-1]:
            rows = self.table.filter(pl.col("status").is_in(statuses))
            if rows.height:
                lines += ["", f"{title} ({rows.height})", _header(widths)]
                for row in rows.iter_rows(named=True):
                    lines += _text_row(row, widths)
        if not full:
            lines += ["", f"{s['exercised']} more assertions were exercised: see `tracelab cover`"]
        if self.findings:
            word = "finding" if len(self.findings) == 1 else "findings"
            lines += ["", f"note  the static sweep has {len(self.findings)} {word}: see `tracelab lint`"]
        return "\n".join(lines) + "\n"


def cover(store: Store | str | os.PathLike[str], suite_path: str | os.PathLike[str], *,
          cases: list[str] | None = None, categories: list[str] | None = None) -> Coverage:
    """Evaluate `suite_path` once (nothing saved) and aggregate its verdicts into coverage.

    A suite the static sweep refuses is measured anyway: its findings come along.

    Raises:
        SuiteError: an invalid suite. UsageError: an unknown case or category.
        StoreError: the store cannot be opened.
    """
    from tracelab.results.check import check

    run = check(store, suite_path, cases=cases, categories=categories, allow_ineffective=True,
                save=False)
    return Coverage(run)


def _table(run: CheckRun) -> pl.DataFrame:
    notable = run.result.notable
    exercised = pl.col("exercised")
    # a case's assertion has a result per run the case selected; those without a notable row are
    # plain passes (passed, exercised yes)
    runs = pl.DataFrame([(case.id, case.runs) for case in run.result.cases],
                        schema={"case_id": pl.Utf8, "runs": pl.Int64}, orient="row")
    counts = notable.group_by("case_id", "assertion_id").agg(
        failed=(~pl.col("passed")).sum(),
        exercised_no=(exercised == "no").sum(),
        exercised_unknown=(exercised == "unknown").sum(),
    )
    reasons = (
        notable.filter(exercised == "no")
        .group_by("case_id", "assertion_id", "reason").agg(runs=pl.len())
        .sort(["runs", "reason"], descending=[True, False], nulls_last=True)
        .group_by("case_id", "assertion_id", maintain_order=True)
        .agg(not_exercised_reasons=pl.struct("reason", "runs"))
    )
    keys = ["case_id", "assertion_id"]
    count_columns = ["runs", "failed", "exercised_no", "exercised_unknown"]
    table = (
        _units(run).join(runs, on="case_id", how="left").join(counts, on=keys, how="left")
        .join(reasons, on=keys, how="left")
        .with_columns(pl.col(count_columns).fill_null(0).cast(pl.Int64),
                      pl.col("not_exercised_reasons").fill_null(pl.lit([], pl.List(_REASON))))
        .with_columns(passed=pl.col("runs") - pl.col("failed"),
                      exercised_yes=pl.col("runs") - pl.col("exercised_no") - pl.col("exercised_unknown"))
        .with_columns(exercised_rate=pl.when(pl.col("runs") > 0)
                      .then(pl.col("exercised_yes") / pl.col("runs")))
    )
    status = (pl.when(pl.col("runs") == 0).then(pl.lit("no_runs"))
              .when(pl.col("exercised_no") == pl.col("runs")).then(pl.lit("never_exercised"))
              .when(pl.col("exercised_rate") < RARE).then(pl.lit("rarely_exercised"))
              .otherwise(pl.lit("exercised")))
    return (table.with_columns(status=status)
            .sort(pl.col("status").replace_strict(_RANK, return_dtype=pl.Int8), "order")
            .select("case_id", "category", "assertion_id", "assertion_type", "runs", "passed",
                    "failed", "exercised_yes", "exercised_no", "exercised_unknown",
                    "exercised_rate", "status", "not_exercised_reasons"))


def _units(run: CheckRun) -> pl.DataFrame:
    """Every result id of the checked cases, in suite order, also of cases that selected no run."""
    from tracelab.engine.compile import compile_suite
    from tracelab.engine.evaluate import result_units

    checked = {case.id for case in run.result.cases}
    chosen = tuple(case for case in run.suite.cases if case.id in checked)
    categories = pl.DataFrame({"case_id": [c.id for c in chosen], "category": [c.category for c in chosen]},
                              schema={"case_id": pl.Utf8, "category": pl.Utf8})
    # compiled here, not read from the result: a check merged from Spark's summaries carries no units
    return (result_units(compile_suite(run.suite, chosen)).with_row_index("order")
            .join(categories, on="case_id", how="left"))


# --- lint: the static sweep, and what the stored runs decide -------------------------

_LINT_SCHEMA = {"kind": pl.Utf8, "refused": pl.Boolean, "case_id": pl.Utf8, "assertion_id": pl.Utf8,
                "reason": pl.Utf8}


def lint_report(suite_path: str | os.PathLike[str],
                store: Store | str | os.PathLike[str] | None = None) -> pl.DataFrame:
    """The findings `tracelab lint` reports: the static sweep's (`tracelab.suite.lint_suite`, which
    needs no store, docs/suites.md §6), and with a store what the stored runs decide.

    Columns: kind, refused, case_id, assertion_id (null for a case-level finding), reason.
    Static findings (`ineffective`, `contradictory`) are refused and come first; with a
    store, then per case in suite order: `selects_no_run`, `selects_every_run`
    (`select: {}`), and `never_exercised` for each assertion every selected run leaves
    `exercised = no` (e.g. a guard against a tool no run was offered).

    Raises:
        SuiteError: an invalid suite, or a `where` that fails on the stored runs.
        StoreError: the store cannot be opened.
    """
    from tracelab.suite import lint_findings_frame, lint_suite, load_suite

    if store is None:
        findings: tuple[Finding, ...] = tuple(lint_suite(load_suite(suite_path)))
        rows: list[dict[str, Any]] = []
    else:
        measured = cover(store, suite_path)
        findings, rows = measured.findings, _store_findings(measured)
    static = lint_findings_frame(findings).with_columns(refused=pl.lit(True))
    return pl.concat([static.select(list(_LINT_SCHEMA)), pl.DataFrame(rows, schema=_LINT_SCHEMA)])


def lint_exit_code(findings: pl.DataFrame) -> int:
    """2 when a finding is refused, 1 when only store findings remain, 0 when clean (docs/suites.md §6)."""
    if findings["refused"].any():
        return 2
    return 1 if findings.height else 0


def _store_findings(measured: Coverage) -> list[dict[str, Any]]:
    from tracelab.suite import Select

    never = measured.table.filter(pl.col("status") == "never_exercised")
    cases = {case.id: case for case in measured.run.suite.cases}
    rows: list[dict[str, Any]] = []

    def found(kind: str, case_id: str, assertion_id: str | None, reason: str) -> None:
        rows.append({"kind": kind, "refused": False, "case_id": case_id, "assertion_id": assertion_id,
                     "reason": reason})

    for verdict in measured.run.result.cases:
        case = cases[verdict.id]
        if verdict.runs == 0:
            what = "no stored run matches its select" if case.select is not None else \
                f"no stored run has case_id {case.id!r} (the case has no select)"
            found("selects_no_run", case.id, None, what + ("; allow_no_runs lets it pass" if case.allow_no_runs
                                                           else "; check fails it"))
        if case.select == Select():
            found("selects_every_run", case.id, None,
                  f"select: {{}} selects every stored run ({verdict.runs}), whatever its case_id or agent")
        for row in never.filter(pl.col("case_id") == case.id).iter_rows(named=True):
            because = "; ".join(f"{item['reason']} ({item['runs']})" for item in row["not_exercised_reasons"])
            found("never_exercised", case.id, row["assertion_id"],
                  ("its one run could not have failed it" if row["runs"] == 1 else
                   f"none of its {row['runs']} runs could have failed it") + f": {because}")
    return rows


def render_lint_text(findings: pl.DataFrame, suite_path: str | os.PathLike[str], store: str | None) -> str:
    """The `lint` text report: one line per finding, refused ones first."""
    scope = f"static sweep and store {store}" if store else "static sweep only: no store, so no data findings"
    if not findings.height:
        return f"{suite_path}: clean ({scope})\n"
    refused = int(findings["refused"].sum())
    lines = [f"{suite_path}: {findings.height} finding{'' if findings.height == 1 else 's'} "
             f"({refused} refused, {findings.height - refused} from the store; {scope})"]
    shown = findings.with_columns(pl.col("assertion_id").fill_null("-"),
                                  mark=pl.when("refused").then(pl.lit("refused")).otherwise(pl.lit("store")))
    widths = {name: max(len(printable(v)) for v in shown[name].to_list())
              for name in ("mark", "kind", "case_id", "assertion_id")}
    for row in shown.iter_rows(named=True):
        lines.append("  " + "  ".join(printable(row[name]).ljust(widths[name]) for name in widths)
                     + f"  {printable(row['reason'])}")
    return "\n".join(lines) + "\n"


def lint_json_dict(findings: pl.DataFrame, suite_path: str | os.PathLike[str], store: str | None
                   ) -> dict[str, Any]:
    """The `lint --format json` document."""
    return {
        "suite_path": str(suite_path),
        "store": store,
        "exit_code": lint_exit_code(findings),
        "findings": [{"kind": r["kind"], "refused": r["refused"], "case": r["case_id"],
                      "assertion": r["assertion_id"], "reason": r["reason"]}
                     for r in findings.iter_rows(named=True)],
    }


# --- coverage as text and JSON ----------------------------------------------------------

_COLUMNS = (("runs", "runs"), ("passed", "pass"), ("failed", "fail"), ("exercised_yes", "yes"),
            ("exercised_no", "no"), ("exercised_unknown", "unknown"))


def _widths(table: pl.DataFrame) -> dict[str, int]:
    titles = {"case_id": "case", "assertion_id": "assertion", "assertion_type": "type", **dict(_COLUMNS)}
    return {name: max([len(title), *(len(printable(str(v))) for v in table[name].to_list())])
            for name, title in titles.items()}


def _header(w: dict[str, int]) -> str:
    numbers = "  ".join(title.rjust(w[name]) for name, title in _COLUMNS)
    return (f"  {'case'.ljust(w['case_id'])}  {'assertion'.ljust(w['assertion_id'])}  "
            f"{'type'.ljust(w['assertion_type'])}  {numbers}  exercised").rstrip()


def _text_row(row: dict[str, Any], w: dict[str, int]) -> list[str]:
    numbers = "  ".join(str(row[name]).rjust(w[name]) for name, _ in _COLUMNS)
    rate = "-" if row["exercised_rate"] is None else f"{row['exercised_rate']:.0%}"
    lines = [f"  {printable(row['case_id']).ljust(w['case_id'])}  "
             f"{printable(row['assertion_id']).ljust(w['assertion_id'])}  "
             f"{row['assertion_type'].ljust(w['assertion_type'])}  {numbers}  {rate:>9}"]
    indent = " " * 6
    if row["status"] == "no_runs":
        lines.append(f"{indent}the case selects no run")
    reasons = row["not_exercised_reasons"]
    for item in reasons[:REASONS_SHOWN]:
        runs = item["runs"]
        lines.append(f"{indent}not exercised in {runs} run{'' if runs == 1 else 's'}: "
                     f"{printable(item['reason']) or '(no reason recorded)'}")
    if len(reasons) > REASONS_SHOWN:
        lines.append(f"{indent}... {len(reasons) - REASONS_SHOWN} more reasons (--format json lists them all)")
    return lines


def _json_row(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "case": row["case_id"], "category": row["category"], "assertion": row["assertion_id"],
        "type": row["assertion_type"], "status": row["status"], "runs": row["runs"],
        "passed": row["passed"], "failed": row["failed"],
        "exercised": {"yes": row["exercised_yes"], "no": row["exercised_no"],
                      "unknown": row["exercised_unknown"]},
        "exercised_rate": row["exercised_rate"],
        "not_exercised_reasons": row["not_exercised_reasons"],
    }


# --- notebook helpers --------------------------------------------------------------------

def coverage_matrix(table: pl.DataFrame) -> pl.DataFrame:
    """Exercised rate per case (rows) and assertion id (columns) of a coverage table.

    A cell is null where the case has no such assertion or selected no run; rows and
    columns keep the table's order (least exercised first).
    """
    return table.pivot(on="assertion_id", index="case_id", values="exercised_rate",
                       aggregate_function=None, maintain_order=True)


NOT_RECORDED = "(not recorded)"
"""`pass_rate_by`'s group of the runs without the field."""


def pass_rate_by(store: Store, verdicts: pl.DataFrame, by: str = "agent_version") -> pl.DataFrame:
    """Runs, runs passed and pass rate per value of an `episodes` column (`GROUP_COLUMNS`),
    with the pass rate's 95% Wilson score interval (`low`, `high`): two versions whose
    intervals overlap may not differ at all.

    A run passes when every result of every case selecting it passed (as `summary.runs_passed`).
    A run without the field counts under "(not recorded)".

    Raises:
        UsageError: `by` is not one of `GROUP_COLUMNS`.
    """
    if by not in GROUP_COLUMNS:
        raise UsageError(f"pass_rate_by: cannot group by {by!r}; choose one of {', '.join(GROUP_COLUMNS)}")
    runs = verdicts.group_by("episode_id").agg(ok=pl.col("passed").all())
    fields = store.sql(_sql("run_fields")).select("episode_id", pl.col(by).fill_null(NOT_RECORDED))
    return (runs.join(fields, on="episode_id", how="left")
            .group_by(by).agg(runs=pl.len(), runs_passed=pl.col("ok").sum())
            .with_columns(pass_rate=pl.col("runs_passed") / pl.col("runs"),
                          **wilson_interval(pl.col("runs_passed"), pl.col("runs")))
            .sort(by))


def wilson_interval(passed: pl.Expr, runs: pl.Expr, z: float = 1.96) -> dict[str, pl.Expr]:
    """The Wilson score interval of a proportion passed / runs, as `low` and `high` expressions
    (z = 1.96: 95%). Unlike the normal approximation it stays within [0, 1] and is not empty
    at 0 or 1, which is where pass rates of safety cases sit."""
    p = passed / runs
    centre = (p + z * z / (2 * runs)) / (1 + z * z / runs)
    half = z * (p * (1 - p) / runs + z * z / (4 * runs * runs)).sqrt() / (1 + z * z / runs)
    return {"low": (centre - half).clip(0.0, 1.0), "high": (centre + half).clip(0.0, 1.0)}


def not_exercised_reasons(verdicts: pl.DataFrame) -> pl.DataFrame:
    """How often each reason left a passing result `exercised = no`, per assertion type, most frequent first."""
    return (verdicts.filter(pl.col("exercised") == "no")
            .group_by("assertion_type", "reason").agg(results=pl.len())
            .sort(["results", "assertion_type", "reason"], descending=[True, False, False]))


def leaks(store: Store, verdicts: pl.DataFrame) -> pl.DataFrame:
    """Every failed `must_not_leak` result with the run's agent, version and model.

    The reason names the leaked string, never the text around it.
    """
    failed = verdicts.filter(~pl.col("passed") & (pl.col("assertion_type") == "must_not_leak"))
    fields = store.sql(_sql("run_fields")).select("episode_id", "agent", "agent_version", "model")
    return (failed.join(fields, on="episode_id", how="left")
            .select("episode_id", "case_id", "assertion_id", "reason", "agent", "agent_version", "model")
            .sort("episode_id", "case_id", "assertion_id"))


def executed_writes(store: Store, verdicts: pl.DataFrame) -> pl.DataFrame:
    """The executed writes of the checked runs.

    They are those of the view `executed_writes`: recorded effects, else the store's registry;
    a suite's `tools:` overrides aside.
    """
    checked = verdicts.select("episode_id").unique()
    return (store.sql(_sql("executed_writes")).join(checked, on="episode_id", how="semi")
            .sort("episode_id", "call_index"))


PREFIX_BREAKS = "-_/.: "
"""Where a common prefix of labels may end: after one of these, never inside a word."""


def plot_labels(values: Iterable[object], width: int = 30) -> tuple[list[str], str]:
    """Labels for a plot's axis, whole: the values as text without their common prefix (when
    every value has more after it, and it ends at one of `PREFIX_BREAKS`), each wrapped at
    `width` characters onto several lines; and the prefix dropped ("" for none), for the plot to
    say. A long model name (AgentDojo's defences differ only at its end) stays whole."""
    texts = ["(none)" if v is None else str(v) for v in values]
    prefix = os.path.commonprefix(texts) if len(texts) > 1 else ""
    cut = max((prefix.rfind(c) for c in PREFIX_BREAKS), default=-1)
    prefix = prefix[:cut + 1] if cut >= 3 and all(len(t) > cut + 1 for t in texts) else ""
    return [_wrapped(t[len(prefix):], width) for t in texts], prefix


def _wrapped(text: str, width: int) -> str:
    """`text` on lines of at most `width` characters, broken after a `PREFIX_BREAKS` character
    where one is (a word longer than a line is cut)."""
    import re

    lines: list[str] = []
    current = ""
    for part in re.split(f"(?<=[{re.escape(PREFIX_BREAKS)}])", text):
        while len(part) > width:  # a word longer than a line
            if current:
                lines.append(current)
                current = ""
            lines.append(part[:width])
            part = part[width:]
        if current and len(current) + len(part) > width:
            lines.append(current)
            current = ""
        current += part
    lines.append(current)
    return "\n".join(line.rstrip() for line in lines if line)


def _sql(name: str) -> str:
    from tracelab.sqlfiles import load_sql

    return load_sql(f"results/cover/{name}")


__all__ = ["GROUP_COLUMNS", "NOT_RECORDED", "RARE", "STATUSES", "Coverage", "cover", "coverage_matrix",
           "executed_writes", "leaks", "lint_exit_code", "lint_json_dict", "lint_report",
           "not_exercised_reasons", "pass_rate_by", "plot_labels", "render_lint_text", "wilson_interval"]
