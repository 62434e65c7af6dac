"""The HTML of `tracelab view`: one file, its CSS and script inline, no external reference.

Summary, cases and the coverage matrix are static HTML (readable without script); a run's
timeline is drawn by the inline script from the embedded JSON when a run's link is opened.
A Content-Security-Policy of ``default-src 'none'`` keeps the browser from fetching anything.
"""
from __future__ import annotations

from functools import cache
from html import escape
from importlib.resources import files
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

if TYPE_CHECKING:
    from collections.abc import Callable

    import polars as pl

    from tracelab.show import Failure, RunTable
    from tracelab.view import AssertionRow, CaseRow, Report

CLIP = 240
"""Characters of a step's args or text the file holds; the rest is `tracelab show --full`."""
CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'"


def render_html(report: Report) -> str:
    """The whole HTML document of `report`."""
    from tracelab import __version__

    title = f"tracelab: {report.suite or 'check'} {report.run_id}"
    parts = [
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">",
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title><style>{_asset('report.css')}</style></head><body>",
        '<header class="top">',
        f"<h1>{escape(report.suite or 'check')}</h1>",
        f'<div class="meta">check <span class="id">{escape(report.run_id)}</span>'
        f"{' · ' + escape(report.started_at.isoformat(timespec='seconds')) if report.started_at else ''}"
        f"{f' · {report.elapsed_ms / 1000:.1f} s' if report.elapsed_ms is not None else ''}"
        f" · store {escape(report.store)} · tracelab {escape(__version__)}</div></header>",
        '<nav class="tabs"><a href="#summary">Summary</a><a href="#cases">Cases</a>'
        '<a href="#matrix">Coverage matrix</a><a href="#run">Run</a></nav><main>',
        _summary(report), _cases(report), _matrix(report),
        '<section id="s-run"><h2>Run</h2><div id="run-view"></div></section>',
        "</main>",
        f'<script type="application/json" id="tl-runs">{_script_safe(_runs(report))}</script>',
        f"<script>{_asset('report.js')}</script></body></html>\n",
    ]
    return "".join(parts)


@cache
def _asset(name: str) -> str:
    return files("tracelab.view").joinpath(name).read_text(encoding="utf-8")


def _script_safe(text: str) -> str:
    """JSON text safe inside a <script> element: no `<`, `>` or `&` that could end or open a tag."""
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _summary(report: Report) -> str:
    s = report.summary
    cards = [
        ("cases passed", f"{s['cases_passed']}/{s['cases']}", s["cases_passed"] == s["cases"]),
        ("runs passed", f"{s['runs_passed']:,}/{s['runs']:,}", s["runs_passed"] == s["runs"]),
        ("results failed", f"{s['failed']:,} of {s['results']:,}", s["failed"] == 0),
        ("exercised yes", f"{s['yes']:,}", None), ("exercised no", f"{s['no']:,}", None),
        ("exercised unknown", f"{s['unknown']:,}", None),
    ]
    html = ['<section id="s-summary"><h2>Summary</h2><div class="cards">']
    for label, value, good in cards:
        tone = "" if good is None else (" ok" if good else " fail")
        html.append(f'<div class="card{tone}"><div class="n">{escape(value)}</div>'
                    f'<div class="l">{escape(label)}</div></div>')
    html.append("</div>")
    left_out = sum(case.left_out for case in report.cases)
    if left_out:
        html.append(f'<p class="leftout">This file holds at most {report.max_runs} failing runs per case '
                    f"(--max-runs): {left_out:,} failing runs are left out.</p>")
    if not report.verdicts_saved:
        html.append('<p class="muted">This check was saved without case verdicts: a case is shown as failed '
                    "when one of its runs failed.</p>")
    html.append("</section>")
    return "".join(html)


def _cases(report: Report) -> str:
    html = ['<section id="s-cases"><h2>Cases, failing first</h2>']
    for index, case in enumerate(report.cases):
        html.append(_case(index, case))
    html.append("</section>")
    return "".join(html)


def _case(index: int, case: CaseRow) -> str:
    mark = "FAIL" if not case.passed else "ok"
    why = "; a permission boundary was crossed" if case.permission else ""
    runs = "no run selected" if case.runs == 0 else f"{case.runs_passed:,}/{case.runs:,} runs passed"
    failed = (f" · {case.failed_results:,} failed result{'' if case.failed_results == 1 else 's'}"
              if case.failed_results else "")
    tone = "fail" if not case.passed else "ok"
    html = [f'<details class="case {tone}" id="c{index}" data-case="{escape(case.case_id)}">'
            f'<summary><span class="badge {mark}">{mark}</span> <b class="id">{escape(case.case_id)}</b> '
            f'<span class="muted">{runs}{failed}{why}</span></summary><div class="body">']
    if case.failing_runs:
        more = (f' <span class="leftout">and {case.left_out:,} more left out '
                f"(--max-runs {len(case.failing_runs)})</span>" if case.left_out else "")
        html.append(f"<div><b>Failing runs</b> ({case.failing_total:,}){more}</div>{_run_links(case.failing_runs)}")
    html.append('<table class="grid"><thead><tr><th>assertion</th><th>type</th><th class="num">runs</th>'
                '<th class="num">failed</th><th class="num">yes</th><th class="num">no</th>'
                '<th class="num">unknown</th></tr></thead><tbody>')
    for position, row in enumerate(case.assertions):
        html.append(_assertion(index, position, row))
    html.append("</tbody></table></div></details>")
    return "".join(html)


def _assertion(case_index: int, position: int, row: AssertionRow) -> str:
    anchor = f"a{case_index}-{position}"
    detail = []
    if row.failing_runs:
        detail.append(f"<div>failing runs in this file: {_run_links(row.failing_runs, inline=True)}</div>")
    for reason in row.reasons:
        sample = ", ".join(f'<span class="id">{escape(r)}</span>' for r in reason.sample)
        more = f" and {reason.runs - len(reason.sample):,} more" if reason.runs > len(reason.sample) else ""
        detail.append(f'<div><span class="badge no">no</span> {reason.runs:,} runs: '
                      f"{escape(reason.reason or '(no reason recorded)')} "
                      f"<span class='muted'>({sample}{more})</span></div>")
    label = f'<span class="id">{escape(row.assertion_id)}</span>'
    if detail:
        label = f'<details class="assertion" id="{anchor}"><summary>{label}</summary>{"".join(detail)}</details>'
    else:
        label = f'<span id="{anchor}">{label}</span>'
    failed = f'<span class="badge FAIL">{row.failed:,}</span>' if row.failed else "0"
    return (f"<tr><td>{label}</td><td>{escape(row.assertion_type)}</td><td class='num'>{row.runs:,}</td>"
            f"<td class='num'>{failed}</td><td class='num'>{row.yes:,}</td><td class='num'>{row.no:,}</td>"
            f"<td class='num'>{row.unknown:,}</td></tr>")


def _run_links(episode_ids: tuple[str, ...], *, inline: bool = False) -> str:
    links = [f'<a class="run-link id" href="#run-{escape(quote(e, safe=""), quote=True)}">{escape(e)}</a>'
             for e in episode_ids]
    if inline:
        return ", ".join(links)
    return '<ul class="runs">' + "".join(f"<li>{link}</li>" for link in links) + "</ul>"


def _matrix(report: Report) -> str:
    columns: dict[str, None] = {}
    for case in report.cases:
        for row in case.assertions:
            columns.setdefault(row.assertion_id, None)
    html = ['<section id="s-matrix"><h2>Coverage matrix</h2>',
            '<p class="legend">Each cell: the share of the case\'s runs that exercised the assertion '
            "(could have failed it). Click a cell for the runs behind it. Hatched: the case has no such "
            "assertion.</p>",
            '<div class="matrix-wrap"><table class="matrix"><thead><tr><th></th>']
    html += [f'<th title="{escape(c)}"><span>{escape(c)}</span></th>' for c in columns]
    html.append("</tr></thead><tbody>")
    for index, case in enumerate(report.cases):
        by_id = {row.assertion_id: (position, row) for position, row in enumerate(case.assertions)}
        html.append(f'<tr><th title="{escape(case.case_id)}"><a href="#c{index}">{escape(case.case_id)}</a></th>')
        for column in columns:
            if column not in by_id:
                html.append('<td class="none"></td>')
                continue
            position, row = by_id[column]
            share = row.exercised_share
            text = "–" if share is None else f"{share:.0%}"
            tip = (f"{case.case_id} × {column}: exercised in {row.yes:,} of {row.runs:,} runs "
                   f"(no {row.no:,}, unknown {row.unknown:,}); failed {row.failed:,}")
            html.append(f'<td style="background:{_shade(share)}"><a href="#a{index}-{position}" '
                        f'title="{escape(tip)}">{text}</a></td>')
        html.append("</tr>")
    html.append("</tbody></table></div></section>")
    return "".join(html)


def _shade(share: float | None) -> str:
    """White (never exercised) to green (always), for a cell's background."""
    if share is None:
        return "#f1f3f4"
    light = round(96 - 46 * share)
    return f"hsl(140,55%,{light}%)"


_NOTICED = ("data", "text", "error")
"""A step's content fields, in the order their withheld notices come."""
_TEXTS = ("sent", "said", "error")
"""What a step shows: what the agent sent (a call's args), what the step says (a call's text,
else a message's text or a result's payload), and its error."""
_LAST = 1 << 30
"""Where a step's kind, status and effect come among its strings: after all its failures'."""


def _runs(report: Report) -> str:
    """The runs as the script reads them, as JSON: {"s": [strings], "runs": {id: run}}; every
    text of a run is a position in "s", numbered in order of first use (see report.js).

    Steps are done set-wise: their texts picked and clipped, their strings numbered and their
    JSON formatted for all steps at once (`_step_frames`, `_step_json`); a loop over the runs
    does each run's own few fields (`_own`)."""
    import orjson
    import polars as pl

    table = report.runs
    owners = [(head, table.withheld.get((head["episode_id"], None), {}), table.failures.get(head["episode_id"], ()))
              for head in table.heads.iter_rows(named=True)]
    own: dict[str, list[Any]] = {"run": [], "value": []}  # each run's own texts, in order of use
    for run, owner in enumerate(owners):
        def use(value: str, run: int = run) -> None:
            own["run"].append(run)
            own["value"].append(value)

        _own(*owner, use)
    steps, failures = _step_frames(table, {head["episode_id"]: run for run, (head, _, _) in enumerate(owners)})
    used = pl.concat([
        pl.DataFrame(own, schema={"run": pl.Int64, "value": pl.Utf8})
        .select("run", step=pl.lit(-1, pl.Int64), slot=pl.int_range(pl.len(), dtype=pl.Int64), value="value"),
        steps.select("run", "step", pl.col(r"^\d+$"))
        .unpivot(index=["run", "step"], variable_name="slot", value_name="value")
        .select("run", "step", pl.col("slot").cast(pl.Int64), "value"),
        failures.select("run", "step", "slot", value="assertion"),
        failures.select("run", "step", pl.col("slot") + 1, value="reason"),
    ]).drop_nulls("value").sort("run", "step", "slot", maintain_order=True)
    strings = used.unique("value", keep="first", maintain_order=True)["value"]
    index = dict(zip(strings.to_list(), range(len(strings)), strict=True))
    by_run = dict(_step_json(steps, failures, strings).iter_rows())
    text = [b'{"s":', orjson.dumps(strings.to_list()), b',"runs":{']
    for run, owner in enumerate(owners):
        head, whole, tail = _own(*owner, index.__getitem__)
        text += [b"," if run else b"", orjson.dumps(owner[0]["episode_id"]), b':{"head":', orjson.dumps(head),
                 b',"whole":', orjson.dumps(whole), b',"steps":[', by_run.get(run, "").encode(),
                 b'],"tail":', orjson.dumps(tail), b"}"]
    return b"".join([*text, b"}}"]).decode()


def _own(head: dict[str, Any], withheld: dict[str, tuple[str, ...]], failures: tuple[Failure, ...],
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
            tail.append([n(name), [{"w": n(_notice(withheld[name], name))}]])
        elif value:
            label, clipped = n(name), [n(value[:CLIP])]
            tail.append([label, clipped if len(value) <= CLIP else [*clipped, {"c": len(value) - CLIP}]])
    whole = [[n(f.assertion_id), n(f.reason)] for f in failures if f.step_idx is None]
    return rows, whole, tail


def _step_frames(table: RunTable, runs: dict[str, int]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Every step's strings, a column each named by its place in the step's order of use (the
    notices of withheld fields, the texts shown, the tool, then failures, then `_LAST`...), with
    the step's `run` (the run's position in the file), its position (`step`) and how many
    characters clipping left out of each text (`more_<text>`); and the failures at each step
    (`slot`: the place of the assertion's name, its reason's next).

    A withheld field is None already (`show.RunTable`): its notice comes instead."""
    import polars as pl

    fields = (*_NOTICED, "name")
    notices = pl.DataFrame(
        [(run, idx, *(_notice(held[name], name) if name in held else None for name in fields))
         for (run, idx), held in table.withheld.items() if idx is not None],
        schema={"episode_id": pl.Utf8, "idx": table.steps.schema["idx"], **{f"w_{name}": pl.Utf8 for name in fields}},
        orient="row")
    call = pl.col("kind").is_in(["tool_call", "confirmation"])
    texts = {"sent": pl.when(call).then(pl.col("data")),
             "said": pl.when(call).then(pl.col("text")).otherwise(pl.coalesce("text", "data")),
             "error": pl.col("error")}
    columns = {str(slot): pl.col(f"w_{name}") for slot, name in enumerate(_NOTICED)}
    for position, (name, value) in enumerate(texts.items()):
        shown = pl.when(value != "").then(value)  # an empty text shows nothing
        columns[str(len(_NOTICED) + position)] = shown.str.slice(0, CLIP)
        more = shown.str.len_chars().cast(pl.Int64) - CLIP
        columns[f"more_{name}"] = pl.when(more > 0).then(more)
    columns |= {"6": pl.coalesce("w_name", "name"), str(_LAST): pl.col("kind"),
                str(_LAST + 1): pl.col("status"), str(_LAST + 2): pl.col("effect")}
    steps = (table.steps.join(notices, on=["episode_id", "idx"], how="left", maintain_order="left")
             .select("episode_id", "idx", step=pl.int_range(pl.len(), dtype=pl.Int64),
                     run=pl.col("episode_id").replace_strict(runs, default=None, return_dtype=pl.Int64), **columns)
             .drop_nulls("run"))  # a step is shown with its run's header, never without
    failed = [(run, f.step_idx, 7 + 2 * k, f.assertion_id, f.reason) for run, found in table.failures.items()
              for k, f in enumerate(f for f in found if f.step_idx is not None)]
    failures = pl.DataFrame(failed, schema={"episode_id": pl.Utf8, "idx": pl.Int64, "slot": pl.Int64,
                                            "assertion": pl.Utf8, "reason": pl.Utf8}, orient="row")
    failures = failures.join(steps.select("episode_id", pl.col("idx").cast(pl.Int64), "run", "step"),
                             on=["episode_id", "idx"], maintain_order="left")
    return steps, failures


def _step_json(steps: pl.DataFrame, failures: pl.DataFrame, strings: pl.Series) -> pl.DataFrame:
    """(run, the JSON of its steps, comma-separated), a step being
    [idx, kind, tool, status, effect, [content parts], [[assertion, reason], ...] or 0]."""
    import polars as pl

    numbers = pl.Series(range(len(strings)), dtype=pl.Int64)

    def number(column: str) -> pl.Expr:
        return pl.col(column).replace_strict(strings, numbers, default=None).cast(pl.Utf8)

    def field(column: str) -> pl.Expr:
        return number(column).fill_null("null")

    parts = [pl.format('{{"w":{}}}', number(str(slot))) for slot in range(len(_NOTICED))]
    for position, name in enumerate(_TEXTS):
        text = str(len(_NOTICED) + position)
        clipped = pl.concat_str([number(text), pl.format('{{"c":{}}}', f"more_{name}")], separator=",",
                                ignore_nulls=True)
        if name == "error":
            clipped = pl.concat_str([pl.lit('{"e":1}'), clipped], separator=",")
        parts.append(pl.when(pl.col(text).is_not_null()).then(clipped))
    failed = (failures.sort("step", "slot", maintain_order=True)
              .group_by("step", maintain_order=True)
              .agg(failed=pl.format("[{},{}]", field("assertion"), field("reason")).str.join(","))
              .select("step", failed=pl.format("[{}]", "failed")))
    step = pl.format("[{},{},{},{},{},[{}],{}]", pl.col("idx").cast(pl.Utf8), field(str(_LAST)), field("6"),
                     field(str(_LAST + 1)), field(str(_LAST + 2)),
                     pl.concat_str(parts, separator=",", ignore_nulls=True), pl.col("failed").fill_null("0"))
    return (steps.join(failed, on="step", how="left", maintain_order="left")
            .group_by("run", maintain_order=True).agg(step.str.join(",")))


def _notice(strings: tuple[str, ...], field: str) -> str:
    from tracelab.show import withheld_notice

    return withheld_notice(strings, field)
