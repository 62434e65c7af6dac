"""The HTML of `tracelab view`: one file, its CSS and script inline, no external reference.

Summary, cases and the coverage matrix are static HTML (readable without script); a run's
timeline is drawn by the inline script from the embedded JSON when a run's link is opened.
A Content-Security-Policy of ``default-src 'none'`` keeps the browser from fetching anything.
"""
from __future__ import annotations

from functools import cache
from html import escape
from importlib.resources import files
from typing import TYPE_CHECKING
from urllib.parse import quote

if TYPE_CHECKING:
    from tracelab.view import AssertionRow, CaseRow, Report, RunRow

CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'"


def render_html(report: Report) -> str:
    """The whole HTML document of `report`."""
    from tracelab.version import __version__

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
    runs = report.runs
    if runs.cap:
        clipped = (f" {runs.clipped:,} text{'s are' if runs.clipped != 1 else ' is'} past it: each shows its first "
                   f"{CLIP_SHOWN} characters and says how many it leaves out." if runs.clipped else
                   " Every text of the runs it holds is whole.")
        cap = f"{runs.cap / 1e6:g} MB" if runs.cap >= 1_000_000 else f"{runs.cap:,} bytes"
        html.append(f'<p class="muted cap">This file holds the text of each run\'s steps whole, up to '
                    f"{cap} of text in all (the runs in the cases' order), to keep the file small "
                    f"enough to open and pass on.{clipped} A long text opens in place (“show all”).</p>")
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


def _crossed(case: CaseRow) -> str:
    """The case's permission failures, naming the types that failed, as the text report says them
    (`results.report.crossed`): from its assertions' counts, in severity order."""
    from tracelab.engine.severity import PERMISSION_TYPES
    from tracelab.results.report import crossed

    failed = {a.assertion_type for a in case.assertions if a.passed < a.runs}
    named = tuple(kind for kind in PERMISSION_TYPES if kind in failed)
    return crossed(named) if named else "a permission boundary was crossed"


def _case(index: int, case: CaseRow) -> str:
    mark = "FAIL" if not case.passed else "ok"
    why = f"; {_crossed(case)}" if case.permission else ""
    runs = ("no run selected" if case.runs == 0
            else f"{case.runs_passed:,}/{case.runs:,} run{'' if case.runs == 1 else 's'} passed")
    failed = (f" · {case.failed_results:,} failed result{'' if case.failed_results == 1 else 's'}"
              if case.failed_results else "")
    tone = "fail" if not case.passed else "ok"
    html = [f'<details class="case {tone}" id="c{index}" data-case="{escape(case.case_id)}">'
            f'<summary><span class="badge {mark}">{mark}</span> <b class="id">{escape(case.case_id)}</b> '
            f'<span class="muted">{runs}{failed}{why}</span></summary><div class="body">']
    if case.failing_runs:
        more = (f' <span class="leftout">and {case.left_out:,} more left out '
                f"(--max-runs {len(case.failing_runs)})</span>" if case.left_out else "")
        html.append(f"<div><b>Failing runs</b> ({case.failing_total:,}){more} "
                    f'<span class="muted">{RUN_ORDER}</span></div>{_run_table(case)}')
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


RUN_ORDER = "listed: the runs that crossed a permission boundary first, then by run id"
CLIP_SHOWN = 240
"""`tracelab.view.runs.CLIP`, not imported: this module renders, it does not read."""


def _run_table(case: CaseRow) -> str:
    """The failing runs a person can pick from: each run's link (to its timeline), model, agent, its
    own case or task id, and the first assertion it failed in this case (step and reason)."""
    rows = case.listed or tuple(RunRow(e) for e in case.failing_runs)
    html = ['<table class="grid failing"><thead><tr><th>run</th><th>model</th><th>agent</th><th>case / task</th>'
            "<th>first failed assertion</th></tr></thead><tbody>"]
    for row in rows:
        where = "whole run" if row.step_idx is None else f"step {row.step_idx}"
        first = ("" if row.assertion_id is None else
                 f'<span class="id">{escape(row.assertion_id)}</span> <span class="muted">{where}</span>'
                 f"{' · ' + escape(_short(row.reason)) if row.reason else ''}")
        html.append(f"<tr><td>{_run_link(row.episode_id)}</td><td>{escape(row.model or '-')}</td>"
                    f"<td>{escape(row.agent or '-')}</td><td class='id'>{escape(row.case_id or '-')}</td>"
                    f"<td>{first}</td></tr>")
    html.append("</tbody></table>")
    return "".join(html)


def _short(text: str, limit: int = 160) -> str:
    """A reason on one line, its first `limit` characters (the whole is in the run's timeline)."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[:limit] + "…"


def _run_links(episode_ids: tuple[str, ...], *, inline: bool = False) -> str:
    links = [_run_link(e) for e in episode_ids]
    if inline:
        return ", ".join(links)
    return '<ul class="runs">' + "".join(f"<li>{link}</li>" for link in links) + "</ul>"


@cache
def _run_link(episode_id: str) -> str:
    """A link to a run's timeline (a run is linked from its case and from each assertion it failed)."""
    anchor = escape(quote(episode_id, safe=""), quote=True)
    return f'<a class="run-link id" href="#run-{anchor}">{escape(episode_id)}</a>'


def _matrix(report: Report) -> str:
    columns: dict[str, None] = {}
    for case in report.cases:
        for row in case.assertions:
            columns.setdefault(row.assertion_id, None)
    html = ['<section id="s-matrix"><h2>Coverage matrix</h2>',
            '<p class="legend"><span class="swatch failed">✗ 3 · 100%</span> runs failed the assertion: '
            "how many, then the share that exercised it. "
            f'<span class="swatch" style="background:{_shade(1.0)}">100%</span>'
            f'<span class="swatch" style="background:{_shade(0.5)}">50%</span>'
            f'<span class="swatch" style="background:{_shade(0.0)}">0%</span> no run failed it: the share of '
            "the case's runs that exercised it (could have failed it), greener when more did. "
            '<span class="swatch none">&nbsp;&nbsp;</span> the case has no such assertion. '
            "Click a cell for the runs behind it.</p>",
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
            tip = (f"{case.case_id} × {column}: failed in {row.failed:,} of {row.runs:,} runs; exercised in "
                   f"{row.yes:,} (no {row.no:,}, unknown {row.unknown:,})")
            link = f'<a href="#a{index}-{position}" title="{escape(tip)}">'
            if row.failed:  # failure first: never the colour of a pass
                html.append(f'<td class="failed">{link}✗ {row.failed:,} <small>· {text}</small></a></td>')
            else:
                html.append(f'<td style="background:{_shade(share)}">{link}{text}</a></td>')
        html.append("</tr>")
    html.append("</tbody></table></div></section>")
    return "".join(html)


def _shade(share: float | None) -> str:
    """White (never exercised) to green (always), for a cell's background."""
    if share is None:
        return "#f1f3f4"
    light = round(96 - 46 * share)
    return f"hsl(140,55%,{light}%)"


def _runs(report: Report) -> str:
    """The runs as the script reads them (`tracelab.view.runs`), as JSON text."""
    return report.runs.text
