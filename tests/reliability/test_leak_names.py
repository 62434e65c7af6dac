"""Leak hygiene for names and headers (issue 29): a leaked string inside a tool name, a
`termination`, an `agent`, `agent_version` or `model` is named, never shown with the text
around it, in any output: check text / JSON / JUnit, the saved rows, `show --check` and `view`."""
from __future__ import annotations

import json

from tests.conftest import episode
from tests.reliability.support import run_cli

KEY = "sk-live-Zq81"
TOOL = f"get_{KEY}_billing-ops-7"
AROUND = {"tool": "billing-ops-7", "termination": "rotated-at-dawn", "agent": "amber-fox",
          "agent_version": "teal-moth", "model": "model-cobalt"}

RUNS = [
    episode("leaky-names",
            {"kind": "tool_call", "name": TOOL, "call_id": "c1", "args": {}},
            {"kind": "tool_result", "call_id": "c1", "status": "error"},
            output="done", case_id="c", termination=f"stopped {KEY} rotated-at-dawn",
            agent=f"agent {KEY} amber-fox", agent_version=f"1.0 {KEY} teal-moth",
            model=f"gpt {KEY} model-cobalt"),
    episode("clean", {"kind": "user", "text": "hello"}, output="Hi!", case_id="c", termination="completed"),
]

SUITE = f"""\
suite: names
min_cases: 1
cases:
  - id: c
    expect:
      must_not_leak: ["{KEY}"]
      termination: completed
    assertions:
      - {{type: tool_status, id: calls-ok, tool: "*"}}
      - {{type: tool_blocklist, id: no-get, blocked: ["get_"]}}
      - {{type: trace_tool_sequence, id: no-calls, sequence: [], allow_other_tools: false}}
"""


def outputs(tmp_path) -> dict[str, str]:
    traces = tmp_path / "t.jsonl"
    traces.write_text("".join(json.dumps(r) + "\n" for r in RUNS))
    suite, store = str(tmp_path / "suite.yaml"), str(tmp_path / "s.duckdb")
    (tmp_path / "suite.yaml").write_text(SUITE)
    assert run_cli("ingest", str(traces), "--store", store, "-q")[0] == 0
    out: dict[str, str] = {}
    for fmt in ("text", "json", "junit"):
        for extra in ([], ["--all-results"]):
            code, text, err = run_cli("check", suite, "--store", store, "--format", fmt, *extra)
            assert (code, err) == (1, ""), err
            out[f"check {fmt} {extra}"] = text
    for table in ("check_results", "check_runs", "check_reasons", "check_failing_runs"):
        code, text, err = run_cli("sql", f"SELECT * FROM {table}", "--store", store, "--format", "json")
        assert (code, err) == (0, ""), err
        out[f"sql {table}"] = text
    for extra in ([], ["--full"]):
        code, text, err = run_cli("show", "leaky-names", "--store", store, "--check", "latest", *extra)
        assert (code, err) == (0, ""), err
        out[f"show {extra}"] = text
    report = tmp_path / "report.html"
    assert run_cli("view", "--store", store, "-o", str(report))[0] == 0
    out["view"] = report.read_text(encoding="utf-8")
    return out


def test_names_and_headers_never_show_the_text_around_a_leak(tmp_path):
    raw = json.dumps(RUNS)
    assert all(context in raw for context in AROUND.values())
    found = outputs(tmp_path)
    leaks = [(name, field) for name, text in found.items() for field, context in AROUND.items()
             if context in text]
    assert leaks == []
    # the failures are still reported, naming the string and the run
    text = found["check text []"]
    for assertion in ("calls-ok", "no-get", "no-calls", "termination"):
        assert "leaky-names" in text and assertion in text, assertion
    assert 'withheld: it holds the leaked string "sk-live-Zq81"' in " ".join(text.split())
    shown = " ".join(found["show ['--full']"].split())
    for field in ("agent", "model", "termination"):
        assert f"{field} withheld: it holds the leaked string" in shown, field


def test_a_reason_keeps_what_holds_no_leaked_string_and_names_what_does():
    import polars as pl

    from tracelab.engine.needles import withhold_reasons

    rows = pl.DataFrame({
        "assertion_type": ["tool_status", "termination", "must_not_leak", "args_valid", "tool_status"],
        "reason": ['call_index 0 ("get_SK-LIVE-zq81_x") has status "error", allowed: ok',
                   'terminated "Straße ÄÖ-x", expected "completed"',
                   'LEAKED "sk-live-Zq81" — this run crossed a permission boundary',
                   "value sk-live-Zq81-tail is not valid", 'call_index 1 ("clean") has status "error"'],
    })
    reasons = withhold_reasons(rows, ["sk-live-Zq81", "äö"])["reason"].to_list()
    assert reasons == [
        'call_index 0 ([withheld: it holds the leaked string "sk-live-Zq81"]) has status "error", allowed: ok',
        'terminated [withheld: it holds the leaked string "äö"], expected "completed"',
        'LEAKED "sk-live-Zq81" — this run crossed a permission boundary',
        '[withheld: it holds the leaked string "sk-live-Zq81"]',
        'call_index 1 ("clean") has status "error"',
    ]
