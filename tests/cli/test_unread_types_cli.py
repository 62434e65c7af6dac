"""Format drift is visible (issue 25): `ingest` and `tracelab info` name the record types an
adapter did not read, per format, in one line each."""
from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from tracelab.cli import cli

LINE = "codex: 3 lines of 2 unknown types not read: world_state, inter_agent_communication_metadata"


def _rollout(path: Path) -> Path:
    lines = [
        {"timestamp": "2026-11-30T10:00:00Z", "type": "session_meta", "payload": {"id": "drift-1"}},
        {"timestamp": "2026-11-30T10:00:01Z", "type": "world_state", "payload": {"full": True}},
        {"timestamp": "2026-11-30T10:00:01Z", "type": "world_state", "payload": {"full": False}},
        {"timestamp": "2026-11-30T10:00:02Z", "type": "inter_agent_communication_metadata", "payload": {}},
        {"timestamp": "2026-11-30T10:00:03Z", "type": "response_item",
         "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    return path


def test_ingest_and_info_name_the_record_types_not_read(tmp_path: Path) -> None:
    rollout = _rollout(tmp_path / "rollout-2026-11-30T10-00-00-drift.jsonl")
    store = str(tmp_path / "store.duckdb")
    ingested = CliRunner().invoke(cli, ["ingest", str(rollout), "--store", store])
    assert ingested.exit_code == 0, ingested.output
    assert LINE in ingested.stdout.splitlines()
    assert "0 quarantined; 3 lines of 2 unknown types not read: world_state" in ingested.output  # the file's line
    info = CliRunner().invoke(cli, ["info", "--store", store])
    assert LINE in info.stdout.splitlines()
    as_json = CliRunner().invoke(cli, ["info", "--format", "json", "--store", store])
    assert json.loads(as_json.stdout)["unread"] == {
        "codex": {"world_state": 2, "inter_agent_communication_metadata": 1}}


def test_a_type_name_with_control_characters_is_printed_escaped(tmp_path: Path) -> None:
    path = _rollout(tmp_path / "rollout-x.jsonl")
    hostile = {"timestamp": "2026-11-30T10:00:04Z", "type": "evil\x1b]52;c;aGk=\x07", "payload": {}}
    path.write_text(path.read_text(encoding="utf-8") + json.dumps(hostile) + "\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["ingest", str(path), "--store", str(tmp_path / "s.duckdb")])
    assert "\x1b" not in result.output and "evil\\x1b]52;c;aGk=\\x07" in result.output
