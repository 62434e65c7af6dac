"""Issue acceptance on real traces: tau-bench's writes, declared once with `tracelab effects set`."""
from __future__ import annotations

import fnmatch
import json

import pytest
from click.testing import CliRunner

from tests.conftest import REAL_TRACES
from tracelab.cli import cli
from tracelab.store import open_store

TAU = REAL_TRACES / "tau_bench_airline_gpt4o" / "gpt-4o-airline.json"
WRITES = ["book_reservation", "cancel_reservation", "update_reservation_*", "send_certificate"]

pytestmark = pytest.mark.skipif(not TAU.exists(), reason=f"{TAU} is absent (../shared/real_traces is not here)")


def _independent_counts() -> tuple[int, int, int]:
    """Write calls, executed write calls and runs with one, read with plain json.

    A result pairs with the earliest still-unpaired call before it with the same id
    (docs/trace-format.md §2: tau-bench reuses call ids within a run); tau-bench records a failed
    call as a tool message whose content starts with `Error:`.
    """
    calls = executed = 0
    runs: set[int] = set()
    for number, run in enumerate(json.loads(TAU.read_text(encoding="utf-8"))):
        open_calls: list[dict] = []
        for message in run["traj"]:
            for call in message.get("tool_calls") or []:
                is_write = any(fnmatch.fnmatchcase(call["function"]["name"], w) for w in WRITES)
                calls += is_write
                open_calls.append({"id": call["id"], "write": is_write})
            if message.get("role") == "tool":
                paired = next(c for c in open_calls if c["id"] == message["tool_call_id"])
                open_calls.remove(paired)
                if paired["write"] and not (message.get("content") or "").startswith("Error:"):
                    executed += 1
                    runs.add(number)
    return calls, executed, len(runs)


def test_declared_writes_on_tau_bench(tmp_path):
    db = str(tmp_path / "tau.duckdb")
    runner = CliRunner()
    assert runner.invoke(cli, ["ingest", "--store", db, str(TAU)]).exit_code == 0
    before = runner.invoke(cli, ["info", "--store", db])
    assert "executed writes: 0;" in before.output and "see `tracelab effects unknown`" in before.output

    declared = runner.invoke(cli, ["effects", "set", "--store", db, *[f"{w}=write" for w in WRITES]])
    assert declared.exit_code == 0, declared.output

    calls, executed, runs = _independent_counts()
    assert (calls, executed, runs) == (250, 177, 113)
    with open_store(db, read_only=True) as store:
        assert store.sql("SELECT count(*), count(DISTINCT episode_id) FROM executed_writes").row(0) == (177, 113)
        assert store.sql("SELECT count(*) FROM calls WHERE effect = 'write' AND effect_source = 'registry'"
                         ).item() == calls
    after = runner.invoke(cli, ["info", "--store", db])
    assert "executed writes: 177;" in after.output
