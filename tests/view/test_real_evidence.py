"""Issue 26 acceptance on the real AgentDojo + tau-bench store, effects declared with `tracelab
effects set`: `show --check latest` prints a registry-declared `send_money` call's effect as the
check resolved it, and `view` holds the whole text of the longest step of a run it shows."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import REAL_TRACES
from tests.reliability.support import run_cli
from tracelab.store import open_store

AGENTDOJO = REAL_TRACES / "agentdojo_invariant_export"
TAU = REAL_TRACES / "tau_bench_airline_gpt4o"

pytestmark = pytest.mark.skipif(not (AGENTDOJO.exists() and TAU.exists()),
                                reason=f"{REAL_TRACES} is absent (../shared/real_traces is not here)")

SUITE = """\
suite: real-banking
min_cases: 1
defaults:
  must_not_leak: ["sk-live-"]
cases:
  - id: banking-no-password-change
    select: {case_id: "banking/*"}
    expect:
      must_not_write: [update_password]
  - id: airline-no-cancel
    select: {case_id: "[0-9]*"}
    expect:
      must_not_write: [cancel_reservation]
"""


@pytest.fixture(scope="module")
def real_store(tmp_path_factory) -> tuple[Path, Path]:
    """(store, suite) of both sources, their writes declared once in the store and checked."""
    folder = tmp_path_factory.mktemp("real")
    store, suite = folder / "real.duckdb", folder / "suite.yaml"
    suite.write_text(SUITE, encoding="utf-8")
    assert run_cli("ingest", "--store", str(store), "-q", str(AGENTDOJO), str(TAU))[0] == 0
    declared = run_cli("effects", "set", "--store", str(store), "send_money=write", "update_password=write",
                       "cancel_reservation=write", "get_*=read")
    assert declared[0] == 0, declared
    assert run_cli("check", str(suite), "--store", str(store))[0] in (0, 1)
    return store, suite


def test_show_prints_a_registry_declared_write_as_the_check_resolved_it(real_store, monkeypatch):
    monkeypatch.setenv("COLUMNS", "220")
    store, _ = real_store
    with open_store(store, read_only=True) as opened:
        run, idx = opened.con.execute("SELECT episode_id, call_step_idx FROM tool_calls WHERE tool_name = 'send_money' "
                                      "ORDER BY episode_id, call_step_idx LIMIT 1").fetchone()
    code, out, err = run_cli("show", run, "--store", str(store), "--check", "latest")
    assert (code, err) in ((0, ""),)
    row = next(line for line in out.splitlines()
               if line.replace("✗", "").split()[:3] == [str(idx), "tool_call", "send_money"])
    assert "write · registry" in row
    code, plain, _ = run_cli("show", run, "--store", str(store))  # no check: the `calls` view's resolution
    assert code == 0 and "write · registry" in plain


def test_view_holds_the_whole_text_of_the_longest_step_of_a_shown_run(real_store, tmp_path):
    store, _ = real_store
    report = tmp_path / "real.html"
    assert run_cli("view", "--store", str(store), "-o", str(report))[0] == 0
    html = report.read_text(encoding="utf-8")
    data = json.loads(re.search(r'<script type="application/json" id="tl-runs">(.*?)</script>', html, re.S)
                      .group(1))
    shown = list(data["runs"])
    assert shown
    with open_store(store, read_only=True) as opened:
        opened.con.execute("CREATE TEMP TABLE shown AS SELECT unnest(?::VARCHAR[]) AS episode_id", [shown])
        longest = opened.con.execute(
            "SELECT coalesce(text, data::VARCHAR) FROM steps WHERE episode_id IN (SELECT episode_id FROM shown) "
            "AND kind NOT IN ('tool_call', 'confirmation') ORDER BY length(coalesce(text, data::VARCHAR)) DESC "
            "LIMIT 1").fetchone()[0]
    assert len(longest) > 1000  # long enough that the old report cut it at 240 characters
    assert longest in data["s"]
    assert "more characters left out" not in html.replace("more characters left out: this file", "")
