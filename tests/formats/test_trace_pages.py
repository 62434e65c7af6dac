"""Issue 29, data loss: a LangSmith trace exported over two page files is one episode (as a
Claude Code session over several files is); a later ingest that brings more runs of a stored
trace says in one line how to store it whole."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tracelab.store import Store

TRACE = "7c1d0000-0000-4000-8000-000000000001"


def _run(run_id: str, run_type: str, name: str, parent: str | None, start: str, **extra: Any) -> dict[str, Any]:
    return {"id": run_id, "trace_id": TRACE, "parent_run_id": parent, "run_type": run_type, "name": name,
            "dotted_order": f"{start}{run_id}", "start_time": start, "end_time": start, **extra}


ROOT = _run(TRACE, "chain", "bank-agent", None, "20261130T100000000000Z",
            inputs={"input": "pay the rent"}, outputs={"output": "Paid."}, status="success")
LOOKUP = _run("r2", "tool", "get_balance", TRACE, "20261130T100001000000Z",
              inputs={"account": "a1"}, outputs={"output": "900"})
TRANSFER = _run("r3", "tool", "transfer_money", TRACE, "20261130T100002000000Z",
                inputs={"to": "landlord", "amount": 800}, outputs={"output": "done"})


def _page(path: Path, runs: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"runs": runs, "cursors": {"next": None}}), encoding="utf-8")
    return path


def _lines(path: Path, runs: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in runs), encoding="utf-8")
    return path


@pytest.mark.parametrize("write, suffix", [(_page, "json"), (_lines, "jsonl")])
def test_runs_of_one_trace_in_two_page_files_are_one_episode(store: Store, tmp_path: Path, write: Any,
                                                               suffix: str) -> None:
    write(tmp_path / "export" / f"page-1.{suffix}", [ROOT, LOOKUP])
    write(tmp_path / "export" / f"page-2.{suffix}", [TRANSFER])
    report = store.ingest([tmp_path / "export"], format="auto")
    assert (report.added, report.skipped, report.quarantined) == (1, 1, 0)
    assert store.sql("SELECT tool_name FROM tool_calls ORDER BY call_index").rows() == [
        ("get_balance",), ("transfer_money",)]


def test_a_later_page_of_a_stored_trace_says_what_to_do(store: Store, tmp_path: Path) -> None:
    folder = tmp_path / "export"
    _page(folder / "page-1.json", [ROOT, LOOKUP])
    assert store.ingest([folder], format="auto").added == 1
    _page(folder / "page-2.json", [TRANSFER])
    report = store.ingest([folder], format="auto")
    assert report.quarantined == 1
    [(reason,)] = store.sql("SELECT reason FROM quarantine").rows()
    assert reason == (f"episode_id {TRACE!r} is already stored with other runs of its trace: put every "
                      "file of the trace in one folder and ingest the folder with --replace to store it whole")
    store.ingest([folder], format="auto", replace=True)
    assert store.sql("SELECT count(*) FROM tool_calls WHERE tool_name = 'transfer_money'").item() == 1


def test_a_run_repeated_with_other_content_in_another_file_is_a_conflict(store: Store, tmp_path: Path) -> None:
    _page(tmp_path / "export" / "page-1.json", [ROOT, TRANSFER])
    _page(tmp_path / "export" / "planted.json", [{**TRANSFER, "inputs": {"to": "me", "amount": 1}}])
    report = store.ingest([tmp_path / "export"], format="auto")
    assert (report.added, report.quarantined) == (0, 2)
    reasons = [r for r, in store.sql("SELECT reason FROM quarantine").rows()]
    assert all("page-1.json" in r and "planted.json" in r and "neither" in r for r in reasons)
