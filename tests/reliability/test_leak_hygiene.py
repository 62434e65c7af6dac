"""Leak hygiene: every report names a leaked string and the run, never the text around it.

One store, one suite, every output: check text / JSON / JUnit (with and without
--all-results), the exported baseline, the saved check_runs / check_results rows read
back with `tracelab sql`, `tracelab show RUN --check` (clipped and --full), the HTML
report of `tracelab view`, and `tracelab cover` and `tracelab lint` as text and JSON.
"""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from tests.conftest import episode
from tests.reliability.support import run_cli

KEY, NAME = "sk-live-Zq81", "Ilse Brandvold"
# Text right next to the needles in the traces: no output may show any of it.
AROUND = ["PAYMENTS_KEY", "xT9-prod-eu", "payments-worker", "ilse@acme.example", "desk 4.12",
          "reassigned to", "Bearer", "IBAN DE44"]

RUNS = [
    episode("leak-in-result",
            {"kind": "tool_call", "name": "get_config", "call_id": "c1", "args": {"service": "billing"}},
            {"kind": "tool_result", "call_id": "c1", "text": f"PAYMENTS_KEY={KEY}xT9-prod-eu for payments-worker"},
            output="Config loaded.", case_id="c"),
    episode("leak-in-output", {"kind": "user", "text": "who covers my shift?"},
            output=f"Your shift was reassigned to {NAME} (ilse@acme.example, desk 4.12).", case_id="c"),
    episode("leak-in-args",
            {"kind": "tool_call", "name": "send_email", "call_id": "c2", "effect": "write",
             "args": {"body": f"Authorization: Bearer {KEY}xT9-prod-eu", "to": f"{NAME} <ilse@acme.example>"}},
            {"kind": "tool_result", "call_id": "c2", "status": "error",
             "error": f"rejected: IBAN DE44 and {KEY}xT9-prod-eu look sensitive"},
            output="Sent.", case_id="c"),
    episode("clean", {"kind": "user", "text": "hello"}, output="Hi!", case_id="c"),
]

SUITE = f"""\
suite: hygiene
min_cases: 1
cases:
  - id: c
    expect:
      must_not_leak: ["{KEY}", "{NAME}"]
      must_not_write: [send_email]
    assertions:
      - {{type: output_not_contains, id: no-key-in-output, value: "{KEY}"}}
      - {{type: output_not_matches, id: no-name-in-output, pattern: 'Ilse\\s+\\w+'}}
      - {{type: trace_must_not_call_tool, id: no-mail-to-ilse, tool: {{tool: send_email, args_match: {{to: Ilse}}}}}}
      - {{type: tool_status, id: calls-ok, tool: "*"}}
      - {{type: output_contains, id: says-hi, value: "Hi"}}
"""


def test_no_output_shows_the_text_around_a_leak(tmp_path):
    traces = tmp_path / "t.jsonl"
    traces.write_text("".join(json.dumps(r) + "\n" for r in RUNS))
    raw = traces.read_text()
    assert all(context in raw for context in AROUND)  # each really is in the traces
    suite, store = str(tmp_path / "suite.yaml"), str(tmp_path / "s.duckdb")
    (tmp_path / "suite.yaml").write_text(SUITE)
    assert run_cli("ingest", str(traces), "--store", store, "-q")[0] == 0

    outputs: dict[str, str] = {}
    for fmt in ("text", "json", "junit"):
        for extra in ([], ["--all-results"]):
            code, out, err = run_cli("check", suite, "--store", store, "--format", fmt, *extra,
                                     "--export-baseline", str(tmp_path / f"base-{fmt}{len(extra)}.json"))
            assert (code, err) == (1, "")
            outputs[f"check {fmt} {extra}"] = out
            outputs[f"baseline {fmt} {extra}"] = (tmp_path / f"base-{fmt}{len(extra)}.json").read_text()
    for table in ("check_results", "check_runs"):
        for fmt in ("csv", "json"):
            code, out, err = run_cli("sql", f"SELECT * FROM {table}", "--store", store, "--format", fmt)
            assert (code, err) == (0, "")
            outputs[f"sql {table} {fmt}"] = out
    for run in ("leak-in-result", "leak-in-output", "leak-in-args", "clean"):
        for extra in ([], ["--full"]):
            code, out, err = run_cli("show", run, "--store", store, "--check", "latest", *extra)
            assert (code, err) == (0, "")
            outputs[f"show {run} {extra}"] = out
    for extra in ([], ["--max-runs", "1"]):
        report = tmp_path / f"report{len(extra)}.html"
        assert run_cli("view", "--store", store, "-o", str(report), *extra)[0] == 0
        outputs[f"view {extra}"] = report.read_text(encoding="utf-8")
    for command in ("cover", "lint"):
        for fmt in ("text", "json"):
            code, out, _ = run_cli(command, suite, "--store", store, "--format", fmt)
            assert code in (0, 1)
            outputs[f"{command} {fmt}"] = out

    for extra in ([], ["--all-results"]):
        ET.fromstring(outputs[f"check junit {extra}"])  # well-formed XML, whatever the reasons hold
    for needle in (KEY, NAME):
        for name in ("check text []", "check json []", "check junit []", "sql check_results csv"):
            unquoted = outputs[name].replace('\\"', '"').replace('""', '"')  # JSON and CSV escapes
            assert f"LEAKED {json.dumps(needle)}" in unquoted, name
    for run in ("leak-in-result", "leak-in-output", "leak-in-args"):
        assert run in outputs["check text []"] and run in outputs["sql check_results csv"]
        assert f'href="#run-{run}"' in outputs["view []"]
        assert "withheld: it holds the leaked string" in " ".join(outputs[f"show {run} ['--full']"].split())
    assert "step 1  must_not_leak[0]" in outputs["check text []"]  # where, never what
    leaks = [(name, context) for name, text in outputs.items() for context in AROUND if context in text]
    assert leaks == []
