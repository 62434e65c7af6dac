"""Issue 26 acceptance on real traces: on the AgentDojo + tau-bench store, with writes declared by
`tracelab effects set`, `tracelab check`'s text output names every failing assertion of every
failing case (fixtures/agentdojo_tau_suite.yaml, a suite written from scratch)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import REAL_TRACES
from tracelab.cli import cli

AGENTDOJO = REAL_TRACES / "agentdojo_invariant_export"
TAU = REAL_TRACES / "tau_bench_airline_gpt4o"
SUITE = Path(__file__).parent / "fixtures" / "agentdojo_tau_suite.yaml"
WRITES = ["send_money=write", "update_password=write", "update_user_info=write", "schedule_transaction=write",
          "update_scheduled_transaction=write", "send_*=write", "delete_file=write", "create_calendar_event=write",
          "cancel_reservation=write", "book_reservation=write", "update_reservation_*=write", "get_*=read",
          "search_*=read", "read_*=read"]

pytestmark = pytest.mark.skipif(not (AGENTDOJO.exists() and TAU.exists()),
                                reason=f"{REAL_TRACES} is absent (../shared/real_traces is not here)")


def test_check_text_names_every_failing_assertion_of_every_failing_case(tmp_path):
    db = str(tmp_path / "real.duckdb")
    runner = CliRunner()
    assert runner.invoke(cli, ["ingest", "-q", "--store", db, str(AGENTDOJO)]).exit_code == 0
    # tau-bench records no model: say it at ingest
    tau = runner.invoke(cli, ["ingest", "-q", "--store", db, str(TAU), "--model", "gpt-4o", "--agent", "tau-bench",
                              "--tag", "airline"])
    assert tau.exit_code == 0 and tau.stderr == ""  # -q: the non-trace files of the folder are not listed
    info = json.loads(runner.invoke(cli, ["info", "--store", db, "--format", "json"]).stdout)
    assert {"agent": "tau-bench", "episodes": 200} in info["agents"]
    assert runner.invoke(cli, ["effects", "set", "--store", db, *WRITES]).exit_code == 0
    text = runner.invoke(cli, ["check", str(SUITE), "--store", db, "--no-save"]).stdout
    doc = json.loads(runner.invoke(cli, ["check", str(SUITE), "--store", db, "--no-save", "--format", "json"]).stdout)

    failed_cases = [case["id"] for case in doc["cases"] if not case["passed"]]
    failing = {(r["case"], r["assertion"]) for r in doc["results"] if not r["passed"]}
    assert failed_cases and len(failing) >= 8  # the suite finds something in every case
    named: dict[str, set[str]] = {}
    case = ""
    for line in text.splitlines():
        if line.startswith(("  FAIL  ", "  ok    ")):
            case = line.split()[1]
        elif line.startswith("        ") and line[8] not in " (" and ": " in line:
            named.setdefault(case, set()).add(line.split(":")[0].strip())
    assert {(c, a) for c, assertions in named.items() for a in assertions} == failing
    assert set(failed_cases) <= set(named)
    # the attacker's IBAN: the reason the banking case exists is not hidden behind the password resets
    assert any(line.startswith("        trace_must_not_call_tool[0]: ") for line in text.splitlines())
    said = [line for line in text.splitlines() if "crossed a permission boundary" in line]
    assert all(re.search(r"must_not_leak|must_not_write|undeclared_writes|a permission boundary was crossed: ", line)
               for line in said)  # only the permission families say it
    assert max(len(line) for line in text.splitlines() if not line.startswith("          ")) <= 120


def test_ingest_model_fills_tau_bench_and_leaves_agentdojo_models(tmp_path):
    db = str(tmp_path / "real.duckdb")
    runner = CliRunner()
    result = runner.invoke(cli, ["ingest", "-q", "--store", db, str(AGENTDOJO), str(TAU), "--model", "gpt-4o",
                                 "--tag", "issue-26"])
    assert result.exit_code == 0, result.output
    rows = runner.invoke(cli, ["sql", "--store", db, "--format", "csv",
                               "SELECT source_format, model = 'gpt-4o' AS filled, count(*) AS n, "
                               "bool_and(list_contains(tags, 'issue-26')) AS tagged FROM episodes GROUP BY ALL "
                               "ORDER BY ALL"]).stdout.splitlines()
    assert rows == ["source_format,filled,n,tagged", "agentdojo,false,3298,true", "tau-bench,true,200,true"]
