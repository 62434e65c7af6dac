"""Output a stored id cannot break or forge: control characters escaped in text reports, JUnit
well-formed whatever the ids hold (issue 14, items 11 and 12).
"""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.conftest import episode
from tests.reliability.support import KEY, ingested, run_cli

FORGER = "x\n  ok    forged-case (999 runs)"
CONTROL = "ctl\x01\x1b[31m\u202e"


@pytest.fixture
def forging_store(tmp_path) -> tuple[Path, Path]:
    runs = [episode(FORGER, {"kind": "user", "text": "hi"}, case_id=CONTROL, output=f"{KEY}"),
            episode("plain", {"kind": "user", "text": "hi"}, case_id=CONTROL, output="ok")]
    store = ingested(tmp_path, *runs)
    suite = tmp_path / "suite.yaml"
    suite.write_text(f"suite: \"s\\u0001\"\nmin_cases: 1\ncases:\n  - id: {json.dumps(CONTROL)}\n"
                     f"    expect: {{must_not_leak: [{KEY}]}}\n"
                     "    assertions:\n      - {type: trace_must_not_call_tool, tool: never}\n")
    return store, suite


def test_junit_is_well_formed_whatever_the_ids_hold(forging_store):
    store, suite = forging_store
    for extra in ([], ["--all-results"]):
        code, out, err = run_cli("check", str(suite), "--store", str(store), "--format", "junit", *extra)
        assert (code, err) == (1, "")
        root = ET.fromstring(out)  # raises on a character XML 1.0 forbids
        case = root.find("testsuite/testcase")
        assert case.get("name") == "ctl\\x01\\x1b[31m\\u202e"
        assert "x\\n  ok    forged-case (999 runs)" in case.find("failure").text


def test_an_episode_id_cannot_forge_a_line_of_a_text_report(forging_store):
    store, suite = forging_store
    outputs = {
        "check": run_cli("check", str(suite), "--store", str(store), "--all-results")[1],
        "cover": run_cli("cover", str(suite), "--store", str(store))[1],
        "lint": run_cli("lint", str(suite), "--store", str(store))[1],
        "info": run_cli("info", "--store", str(store))[1],
    }
    for name, text in outputs.items():
        assert text, name
        lines = text.splitlines()
        assert not any(line.lstrip().startswith(("ok    forged-case", "ok forged-case")) for line in lines), name
        assert not any(char in text for char in "\x01\x1b\u202e"), name
    assert "x\\n  ok    forged-case (999 runs)  must_not_leak[0]" in outputs["check"]
    assert "ctl\\x01\\x1b[31m\\u202e" in outputs["check"]


