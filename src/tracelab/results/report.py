"""Rendering a check: the text report, JUnit XML and JSON (docs/cli.md).

Reports name a leaked string and the run, never the text around it: they print only
the reasons the engine wrote, which carry the needle and nothing of the transcript.
"""
from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, overload

from tracelab.words import plural

if TYPE_CHECKING:
    import polars as pl

    from tracelab.engine.verdicts import CaseVerdict, CheckResult, Example, FailedAssertion
    from tracelab.results.check import CheckRun

PASSES_SHOWN = 20
"""Passing results per case the text report lists with --all-results; JSON lists them all."""
WIDTH = 120
"""Columns the report's own lines keep within (a case line's permission part moves to a line of
its own beyond it); a reason is printed whole, however long: it is the evidence."""

_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
                          "\ud800-\udfff\ufffe\uffff]")
"""Control characters, line and paragraph separators, and bidirectional overrides: each can make
a line of a report say something its text does not (a newline in an episode id starts a line),
and ESC (0x1b) or a C1 control starts a sequence the terminal obeys (a clipboard write, a link).
Surrogates and the noncharacters U+FFFE and U+FFFF, which XML 1.0 forbids, too (JUnit)."""
_UNPRINTABLE_IN_LINES = re.compile(_UNPRINTABLE.pattern.replace("\x00-\x1f", "\x00-\x08\x0b-\x1f"))
"""The same, keeping newlines and tabs: for text shown whole over several lines (`show --full`)."""
_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


@overload
def printable(text: str, *, lines: bool = False) -> str: ...
@overload
def printable(text: None, *, lines: bool = False) -> None: ...
def printable(text: str | None, *, lines: bool = False) -> str | None:
    """`text` safe to print on one line of a report: control characters written as escapes
    (``\\n``, ``\\x01``, ``\\u202e``). Ids, reasons and every other stored string come from
    traces and suites, and are printed through this in every text output (and in JUnit, where
    XML 1.0 forbids them). `lines`: keep newlines and tabs (text shown whole on several lines)."""
    if text is None:
        return None
    return (_UNPRINTABLE_IN_LINES if lines else _UNPRINTABLE).sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    return _ESCAPES.get(char) or (f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}")


def never_exercised(result: CheckResult) -> pl.DataFrame:
    """(case_id, assertion_id) pairs that no selected run exercised (every one of the case's runs has an
    `exercised = no` row)."""
    import polars as pl

    runs = pl.DataFrame([(case.id, case.runs) for case in result.cases if case.runs],
                        schema={"case_id": pl.Utf8, "runs": pl.Int64}, orient="row")
    return (result.notable.filter(pl.col("exercised") == "no")
            .group_by("case_id", "assertion_id", maintain_order=True).len()
            .join(runs, on="case_id", maintain_order="left")
            .filter(pl.col("len") == pl.col("runs")).select("case_id", "assertion_id"))


def render_text(run: CheckRun, *, color: bool = False, all_results: bool = False) -> str:
    """The text report: one line per case; under a case, each failing assertion with its count of
    failing runs and `EXAMPLES` of them, most severe first (docs/cli.md); then notes."""
    import polars as pl

    result = run.result
    s = result.summary
    style = _styler(color)
    lines = [style(f"{printable(result.suite)}: {s.cases_passed}/{plural(s.cases, 'case')} passed, "
                   f"{s.runs_passed}/{_runs(s.runs)}", bold=True)]
    failures: dict[str, list[FailedAssertion]] = {}
    for failed in result.failed_assertions():
        failures.setdefault(failed.case_id, []).append(failed)
    passes = result.verdicts.filter(pl.col("passed")) if all_results else None
    for case in result.cases:
        lines.extend(_case_lines(case, style))
        for failed in failures.get(case.id, ()):
            lines.extend(_assertion_lines(failed, case.runs))
        if passes is not None:
            lines.extend(_pass_lines(passes.filter(pl.col("case_id") == case.id)))
    # a result merged from summaries (`check --engine spark`) may hold no row at all: it counts them itself
    never = getattr(result, "never_exercised_count", None)
    if never is None:
        never = never_exercised(result).height
    if never:
        word = "assertion was" if never == 1 else "assertions were"
        lines.append(style(f"  note  {never} {word} never exercised: see `tracelab cover`", fg="yellow"))
    if s.unknown:
        word = "result is" if s.unknown == 1 else "results are"
        lines.append(style(f"  note  {s.unknown} {word} unknown: the runs recorded too little to say",
                           fg="yellow"))
    if not run.saved:
        lines.append("  note  results not saved (--no-save or a read-only store)")
    return "\n".join(lines) + "\n"


def _assertion_lines(failed: FailedAssertion, runs: int) -> list[str]:
    """A failing assertion's header (its count of failing runs), then its example runs."""
    head = f"        {printable(failed.assertion_id)}: {failed.failed_runs} of {_runs(runs)} failed"
    if failed.assertion_type == "undeclared_writes" and failed.same_write:
        same = ", ".join(f"{n} as {printable(other)}" for other, n in failed.same_write)
        head += f"; the same write in {same} (listed there)"
    lines = [head] + [f"          {_run_line(failed.assertion_id, example)}" for example in failed.examples]
    more = failed.listed - len(failed.examples)
    if more:
        lines.append(f"          ... {plural(more, 'more run')} (--format json lists them all)")
    return lines


def _run_line(assertion_id: str, example: Example) -> str:
    """`run[ step N]  assertion[ + also]  reason`: one failing run of an assertion, on one line even
    when the same write fails two assertions (`must_not_write[0] + undeclared_writes`)."""
    ids = " + ".join(str(printable(i)) for i in (assertion_id, *example.also))
    reason = printable(example.reason) or "failed"
    return f"{where({'episode_id': example.episode_id, 'step_idx': example.step_idx})}  {ids}  {reason}"


def _pass_lines(passes: pl.DataFrame) -> list[str]:
    """With --all-results: a case's passing results, at most `PASSES_SHOWN`."""
    lines = []
    for row in passes.head(PASSES_SHOWN).iter_rows(named=True):
        extra = "" if row["exercised"] == "yes" else f" [{row['exercised']}]"
        reason = printable(row["reason"]) or "passed"
        lines.append(f"          pass {where(row)}  {printable(row['assertion_id'])}  {reason}{extra}")
    if passes.height > PASSES_SHOWN:
        lines.append(f"          ... {plural(passes.height - PASSES_SHOWN, 'more pass', 'more passes')} "
                     "(--format json lists them all)")
    return lines


def where(row: dict[str, Any]) -> str:
    """A result's run, and its step when one decides it: ``run-000123 step 14`` (docs/cli.md
    §6)."""
    step, run = row.get("step_idx"), printable(row["episode_id"])
    return run if step is None else f"{run} step {step}"


def _case_lines(case: CaseVerdict, style: Callable[..., str]) -> list[str]:
    """The case's line: ``FAIL  id (n/m runs; a permission boundary was crossed: types)``; the
    permission part on a line of its own when the line would pass `WIDTH` columns."""
    mark = style("ok   ", fg="green") if case.passed else style("FAIL ", fg="red", bold=True)
    head = f"  {mark} {printable(case.id)} ({_case_detail(case)}"
    if not case.permission_failure:
        return [head + ")"]
    line = f"{head}; {crossed(case.permission_families)})"
    if len(line) - len(mark) + 5 <= WIDTH:
        return [line]
    return [head + ")", f"        ({crossed(case.permission_families)})"]


def _case_detail(case: CaseVerdict) -> str:
    if case.runs == 0:
        return "no run selected" + ("; allow_no_runs" if case.passed else "")
    if case.passed and case.runs_passed == case.runs:
        return _runs(case.runs)
    if case.passed:
        return f"{case.runs_passed}/{_runs(case.runs)}, min_pass_rate {case.min_pass_rate:g}"
    return f"{case.runs_passed}/{_runs(case.runs)}"


def crossed(families: tuple[str, ...]) -> str:
    """What a case's permission failures say, naming the failed types: ``a permission boundary was
    crossed: must_not_leak, undeclared_writes`` (the case line of the text report and of `view`)."""
    return "a permission boundary was crossed: " + ", ".join(families)


def _runs(n: int) -> str:
    return plural(n, "run")


_ANSI = {"red": "31", "green": "32", "yellow": "33"}
"""The colours the report uses, as ANSI SGR codes (what click.style writes for them)."""


def _styler(color: bool) -> Callable[..., str]:
    """A `style(text, fg=None, bold=False)` that colours with ANSI codes, or returns text as is."""
    def style(text: str, fg: str | None = None, bold: bool = False) -> str:
        if not color:
            return text
        codes = ([_ANSI[fg]] if fg else []) + (["1"] if bold else [])
        return "".join(f"\x1b[{code}m" for code in codes) + text + "\x1b[0m"

    return style


def render_json(run: CheckRun, suite_path: str | os.PathLike[str], *, all_results: bool = False,
                baseline: dict[str, Any] | None = None) -> bytes:
    """The `check --format json` document, UTF-8; `baseline` (a comparison's findings) under the `baseline` key."""
    from tracelab.results.check import envelope

    document = envelope(run, suite_path, all_results=all_results)
    if baseline is not None:
        document["baseline"] = baseline
    return indented_json(document)


def indented_json(document: object) -> bytes:
    """Indented JSON as UTF-8, non-ASCII as is: the one JSON writer of reports and baselines (orjson,
    much faster than json on a large result; kept as bytes, since decoding a large document only
    to encode it again is wasted work)."""
    import orjson

    return orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n"


def render_junit(run: CheckRun) -> str:
    """JUnit XML: one testsuite, one testcase per case (a CI's test count is the suite's case count);
    a failing case's message names each failing assertion with its count of failing runs, most
    severe first, and its text lists every failing run under its assertion."""
    import polars as pl

    result = run.result
    failed = [c for c in result.cases if not c.passed]
    root = ET.Element("testsuites", name="tracelab", tests=str(len(result.cases)),
                      failures=str(len(failed)), time=f"{run.elapsed_ms / 1000:.3f}")
    suite = ET.SubElement(root, "testsuite", name=printable(result.suite), tests=str(len(result.cases)),
                          failures=str(len(failed)), errors="0", skipped="0",
                          time=f"{run.elapsed_ms / 1000:.3f}")
    props = ET.SubElement(suite, "properties")
    for name, value in (("run_id", run.run_id), ("suite_sha256", run.suite.sha256), ("store", run.store)):
        ET.SubElement(props, "property", name=name, value=printable(value))
    failures: dict[str, list[FailedAssertion]] = {}
    for assertion in result.failed_assertions(examples=None):
        failures.setdefault(assertion.case_id, []).append(assertion)
    for case in result.cases:
        element = ET.SubElement(suite, "testcase",
                                classname=printable(f"{result.suite}.{case.category or 'cases'}"),
                                name=printable(case.id), time="0")
        mine = failures.get(case.id, [])
        if not case.passed:
            if case.runs == 0:
                message = "no run selected (set allow_no_runs to accept that)"
            else:
                message = f"{case.runs_passed}/{_runs(case.runs)} passed (min_pass_rate {case.min_pass_rate:g})"
                if case.permission_failure:
                    message += f"; {crossed(case.permission_families)}"
                if mine:
                    message += "; failed: " + ", ".join(
                        f"{printable(a.assertion_id)} ({_runs(a.failed_runs)})" for a in mine)
            failure = ET.SubElement(element, "failure", message=message,
                                    type=mine[0].assertion_type if mine else "no_runs")
            # the text report's lines, less its case indentation (8 columns)
            failure.text = "\n".join(line[8:] for a in mine for line in _assertion_lines(a, case.runs))
        not_exercised = result.notable.filter(pl.col("case_id") == case.id, pl.col("exercised") == "no")
        if not_exercised.height:
            out = ET.SubElement(element, "system-out")
            out.text = "\n".join(f"not exercised: {_junit_line(r)}" for r in not_exercised.iter_rows(named=True))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _junit_line(row: dict[str, Any]) -> str:
    """`run[ step N]  assertion  reason`, every part printable."""
    return "  ".join((where(row), str(printable(row["assertion_id"])), str(printable(row["reason"]))))
