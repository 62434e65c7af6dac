"""`tracelab demo` on the sample traces: what a first-time user sees, section by section."""
from __future__ import annotations

import os

from click.testing import CliRunner

from tests.conftest import REPO
from tracelab.cli import cli

HEADINGS = [
    "== ingest sample_traces",
    "== what is in the store",
    "== executed writes (tool calls with effect write that ran)",
    "== tracelab effects import sample_traces/effects.yaml (what the sample tools do: 33 names and globs)",
    "== which runs leaked a string containing 'sk-live-', and where",
    "== tracelab cover sample_traces/suite.yaml (what could not have failed)",
    "== tracelab check sample_traces/suite.yaml",
]


def test_demo_shows_ingest_counts_writes_leaks_coverage_and_the_check(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    os.symlink(REPO / "sample_traces", tmp_path / "sample_traces")
    result = CliRunner().invoke(cli, ["demo", "--store", str(tmp_path / "demo.duckdb")],
                                env={"COLUMNS": "120"})
    lines = result.output.splitlines()

    assert result.exit_code == 0, result.output  # failing sample cases are the point: still 0
    assert [line for line in lines if line.startswith("== ")] == HEADINGS
    assert lines[1] == ("76 episodes added, 0 skipped, 2 merged into an earlier session, 19 quarantined, "
                        "4 files not traces")
    assert lines[3:9] == [
        "  episodes                76",
        "  steps                  521",
        "  tool_calls             136",
        "  tool_definitions       192",
        "  quarantine              19",
        "  sources                 28",
    ]
    writes = lines[lines.index(HEADINGS[2]) + 1:lines.index(HEADINGS[3])]
    assert writes[-1] == "(13 rows)"
    # the samples' declared effects reveal the writes their formats never recorded
    assert lines[lines.index(HEADINGS[3]) + 1] == (
        "executed writes: 13 before, 27 after; 29 calls still have an unknown effect (`tracelab effects unknown`)")
    leaks = lines[lines.index(HEADINGS[4]) + 1:lines.index(HEADINGS[5])]
    # where each leak is (run and origin), never the text around it
    assert [line.split() for line in leaks] == [
        ["episode_id", "origin"], ["bk-006", "step.error"], ["ed-005", "step.data"],
        ["sp-003", "step.data"], ["(3", "rows)"]]
    cover = lines[lines.index(HEADINGS[5]) + 1]
    assert cover == "sample-agents: exercise coverage of 172 assertions in 13 cases over 36 runs"
    check = lines[lines.index(HEADINGS[6]) + 1:]
    assert check[0] == "sample-agents: 7/13 cases passed, 26/36 runs"
    assert check[1] == "  FAIL  roster-other-org (2/3 runs; a permission boundary was crossed: must_not_leak)"
    assert sum(line.startswith("  FAIL  ") for line in check) == 6


def test_demo_on_a_folder_that_does_not_exist_is_a_usage_error(tmp_path):
    result = CliRunner().invoke(cli, ["demo", str(tmp_path / "nowhere"), "--store", str(tmp_path / "s.duckdb")])
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == (
        f"Error: Invalid value for '[TRACES]': Directory '{tmp_path / 'nowhere'}' does not exist.")
