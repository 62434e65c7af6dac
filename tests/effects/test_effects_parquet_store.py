"""Effects from the store's registry decide the same verdicts on an exported Parquet store, and on
that export adopted as a Delta store, as on the DuckDB store it came from (the families read a
call's resolved effect through chk_calls; as a view, DuckDB 2.0.1 filtered it wrongly on the Delta
store: sql/engine/assertions/_tools.sql)."""
from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from tracelab.cli import cli
from tracelab.store import open_store

SUITE = """
suite: registry-effects
min_cases: 1
cases:
  - id: c
    select: {case_id: c}
    expect: {must_not_write: [send], must_not_leak: ["sk-live-"]}
"""


def _episode(episode_id: str, *steps: dict) -> dict:
    return {"episode_id": episode_id, "case_id": "c", "steps": list(steps)}


def test_registry_effects_decide_the_same_verdicts_on_an_exported_store(tmp_path):
    send = [{"kind": "tool_call", "name": "send", "call_id": "k"},
            {"kind": "tool_result", "call_id": "k", "status": "ok"}]
    traces = tmp_path / "a.jsonl"
    traces.write_text("\n".join(json.dumps(e) for e in (
        _episode("r1", *send), _episode("r2", {"kind": "assistant", "text": "no tools"}))) + "\n")
    suite = tmp_path / "suite.yaml"
    suite.write_text(SUITE)
    store = tmp_path / "s.duckdb"
    with open_store(store) as opened:
        opened.ingest([traces])
    assert CliRunner().invoke(cli, ["effects", "set", "send=write", "--store", str(store)]).exit_code == 0
    with open_store(store, read_only=True) as opened:
        opened.export(tmp_path / "exported")
    pytest.importorskip("deltalake", reason="deltalake is not installed (pip install 'tracelab[spark]')")
    from tracelab.spark.layout import open_layout

    shutil.copytree(tmp_path / "exported", tmp_path / "delta")
    open_layout(str(tmp_path / "delta"), create=False)  # adopted in place, as an --engine spark command does
    documents = []
    for where in (store, tmp_path / "exported", tmp_path / "delta"):
        result = CliRunner().invoke(cli, ["check", str(suite), "--store", str(where), "--no-save",
                                          "--format", "json", "--all-results"])
        assert result.exit_code == 1, result.output
        document = json.loads(result.stdout)
        for key in ("run_id", "elapsed_ms", "store"):
            document.pop(key)
        documents.append(document)
    assert documents[0] == documents[1] == documents[2]
    failed = {(r["assertion"], r["episode_id"]) for r in documents[2]["results"] if not r["passed"]}
    assert failed == {("must_not_write[0]", "r1"), ("undeclared_writes", "r1")}
