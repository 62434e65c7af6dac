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

if TYPE_CHECKING:
    import polars as pl

    from tracelab.engine.verdicts import CaseVerdict
    from tracelab.results.check import CheckRun

FAILURES_SHOWN = 20
"""Failure lines per case in the text report; JSON and JUnit list them all."""

_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
                          "\ud800-\udfff\ufffe\uffff]")
"""Control characters, line and paragraph separators, and bidirectional overrides: each can make
a line of a report say something its text does not (a newline in an episode id starts a line).
Surrogates and the noncharacters U+FFFE and U+FFFF, which XML 1.0 forbids, too (JUnit)."""
_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


@overload
def printable(text: str) -> str: ...
@overload
def printable(text: None) -> None: ...
def printable(text: str | None) -> str | None:
    """`text` safe to print on one line of a report: control characters written as escapes
    (``\\n``, ``\\x01``, ``\\u202e``). Ids and reasons come from stored traces and suites, and
    are printed through this in every text output (and in JUnit, where XML 1.0 forbids them)."""
    if text is None:
        return None
    return _UNPRINTABLE.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    return _ESCAPES.get(char) or (f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}")


def never_exercised(verdicts: pl.DataFrame) -> pl.DataFrame:
    """(case_id, assertion_id) pairs that no selected run exercised (every row `exercised = no`)."""
    import polars as pl

    return (verdicts.group_by("case_id", "assertion_id", maintain_order=True)
            .agg(never=(pl.col("exercised") == "no").all())
            .filter(pl.col("never")).drop("never"))


def render_text(run: CheckRun, *, color: bool = False, all_results: bool = False) -> str:
    """The text report: one line per case, failures under their case, then notes."""
    import polars as pl

    result = run.result
    s = result.summary
    style = _styler(color)
    lines = [style(f"{printable(result.suite)}: {s.cases_passed}/{s.cases} cases passed, "
                   f"{s.runs_passed}/{s.runs} runs", bold=True)]
    rows = result.reported(all_results)
    for case in result.cases:
        lines.append(_case_line(case, style))
        case_rows = rows.filter(pl.col("case_id") == case.id)
        shown = case_rows if all_results else case_rows.filter(~pl.col("passed"))
        for row in shown.head(FAILURES_SHOWN).iter_rows(named=True):
            label = "" if not all_results else ("pass " if row["passed"] else "FAIL ")
            extra = "" if row["passed"] or row["exercised"] == "yes" else f" [{row['exercised']}]"
            reason = printable(row["reason"]) or ("passed" if row["passed"] else "failed")
            lines.append(f"          {label}{where(row)}  {printable(row['assertion_id'])}  {reason}{extra}")
        if shown.height > FAILURES_SHOWN:
            lines.append(f"          ... {shown.height - FAILURES_SHOWN} more (--format json lists them all)")
    never = never_exercised(result.verdicts).height
    if never:
        word = "assertion was" if never == 1 else "assertions were"
        lines.append(style(f"  note  {never} {word} never exercised: see `tracelab cover`", fg="yellow"))
    if s.unknown:
        lines.append(style(f"  note  {s.unknown} results are unknown: the runs recorded too little to say",
                           fg="yellow"))
    if not run.saved:
        lines.append("  note  results not saved (--no-save or a read-only store)")
    return "\n".join(lines) + "\n"


def where(row: dict[str, Any]) -> str:
    """A result's run, and its step when one decides it: ``run-000123 step 14`` (cli-and-results
    "Failure location")."""
    step, run = row.get("step_idx"), printable(row["episode_id"])
    return run if step is None else f"{run} step {step}"


def _case_line(case: CaseVerdict, style: Callable[..., str]) -> str:
    if case.runs == 0:
        detail = "no run selected" + ("; allow_no_runs" if case.passed else "")
    elif case.passed:
        detail = _runs(case.runs) if case.runs_passed == case.runs else \
            f"{case.runs_passed}/{_runs(case.runs)}, min_pass_rate {case.min_pass_rate:g}"
    else:
        why = "; a permission boundary was crossed" if case.permission_failure else ""
        detail = f"{case.runs_passed}/{_runs(case.runs)}{why}"
    mark = style("ok   ", fg="green") if case.passed else style("FAIL ", fg="red", bold=True)
    return f"  {mark} {printable(case.id)} ({detail})"


def _runs(n: int) -> str:
    return f"{n} run" if n == 1 else f"{n} runs"


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
    """Indented JSON as UTF-8, non-ASCII as is (orjson: about 10x faster than json on 750k
    result rows; kept as bytes, since decoding 170 MB only to encode it again costs a second)."""
    import orjson

    return orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n"


def render_junit(run: CheckRun) -> str:
    """JUnit XML: one testsuite, one testcase per case; a failure lists its failing runs and reasons."""
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
    for case in result.cases:
        element = ET.SubElement(suite, "testcase",
                                classname=printable(f"{result.suite}.{case.category or 'cases'}"),
                                name=printable(case.id), time="0")
        rows = result.verdicts.filter(pl.col("case_id") == case.id)
        if not case.passed:
            bad = rows.filter(~pl.col("passed"))
            if case.runs == 0:
                message = "no run selected (set allow_no_runs to accept that)"
            else:
                message = f"{case.runs_passed}/{case.runs} runs passed (min_pass_rate {case.min_pass_rate:g})"
                if case.permission_failure:
                    message += "; a permission boundary was crossed"
            failure = ET.SubElement(element, "failure", message=message,
                                    type=bad["assertion_type"][0] if bad.height else "no_runs")
            failure.text = "\n".join(_junit_line(r) for r in bad.iter_rows(named=True))
        not_exercised = rows.filter(pl.col("exercised") == "no")
        if not_exercised.height:
            out = ET.SubElement(element, "system-out")
            out.text = "\n".join(f"not exercised: {_junit_line(r)}" for r in not_exercised.iter_rows(named=True))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _junit_line(row: dict[str, Any]) -> str:
    """`run[ step N]  assertion  reason`, every part printable."""
    return "  ".join((where(row), str(printable(row["assertion_id"])), str(printable(row["reason"]))))
