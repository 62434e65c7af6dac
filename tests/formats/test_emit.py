"""Native episodes written as openai-chat / anthropic records read back to the same tool calls."""
from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from tracelab.formats.source import Source
from tracelab.generate.emit import EMITTERS, to_anthropic, to_openai_chat
from tracelab.ingest.prepare import detect_format
from tracelab.store import open_store

NATIVE_SAMPLES = Path(__file__).resolve().parents[2] / "sample_traces" / "native"
CALL_COLUMNS = ("call_index, call_step_idx, result_step_idx, call_id, tool_name, args, args_text,"
                " result_text, status, error, effect")

EPISODE = {
    "episode_id": "rt-1", "case_id": "book", "model": "gpt-4o", "agent": "travel",
    "termination": "completed", "reward": 1.0, "tags": ["t"], "meta": {"region": "eu"},
    "tools": [
        {"name": "search", "effect": "read", "description": "Search.",
         "parameters": {"type": "object", "properties": {"from": {"type": "string"}}}},
        {"name": "book", "effect": "write"},
    ],
    "steps": [
        {"kind": "system", "text": "Book what is asked."},
        {"kind": "user", "text": "Book LIS to BER."},
        {"kind": "assistant", "text": "Searching."},
        {"kind": "tool_call", "name": "search", "call_id": "c1",
         "args": {"from": "LIS", "to": "BER"}},
        {"kind": "tool_call", "name": "search", "call_id": "",
         "args": '{"from": "LIS", "to": "MUC"}'},
        {"kind": "tool_result", "call_id": "c1", "text": "2 flights"},
        {"kind": "tool_result", "call_id": "", "result": {"flights": []}, "status": "error",
         "error": "no route"},
        {"kind": "tool_call", "name": "book", "call_id": "c3", "args": {"flight": "FR1"}},
        {"kind": "tool_result", "call_id": "c3", "name": "book", "text": "PNR X", "is_error": True},
        {"kind": "assistant", "text": "Retrying the booking."},
        {"kind": "tool_call", "name": "book", "call_id": "c4", "args": "{broken"},
    ],
}


def _ingest(tmp_path: Path, name: str, records: list[dict], fmt: str) -> list[tuple]:
    path = tmp_path / f"{name}.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    with open_store(tmp_path / f"{name}.duckdb") as store:
        report = store.ingest([path])
        assert (report.files[0].format, report.quarantined) == (fmt, 0)
        return store.sql(f"SELECT episode_id, {CALL_COLUMNS} FROM tool_calls"
                         " ORDER BY episode_id, call_index").rows()


def test_native_to_openai_chat_gives_the_same_tool_calls(tmp_path: Path) -> None:
    native = _ingest(tmp_path, "native", [EPISODE], "native")
    chat = _ingest(tmp_path, "chat", [to_openai_chat(EPISODE)], "openai-chat")
    assert [row[5] for row in native] == ["search", "search", "book", "book"]
    assert [row[9] for row in native] == ["ok", "error", "error", "missing"]
    assert chat == native


def test_native_to_anthropic_gives_the_same_tool_calls_but_error_texts(tmp_path: Path) -> None:
    native = _ingest(tmp_path, "native", [EPISODE], "native")
    anthropic = _ingest(tmp_path, "anthropic", [to_anthropic(EPISODE)], "anthropic")
    without_error = [row[:10] + row[11:] for row in native]
    assert [row[:10] + row[11:] for row in anthropic] == without_error
    assert [row[10] for row in anthropic] == [None, None, None, None]


def test_openai_chat_record_shape() -> None:
    record = to_openai_chat(EPISODE)
    assert {k: record[k] for k in ("id", "case_id", "model", "region")} == {
        "id": "rt-1", "case_id": "book", "model": "gpt-4o", "region": "eu"}
    assert record["tools"][1] == {"type": "function",
                                  "function": {"name": "book", "x-effect": "write"}}
    assert record["messages"][2] == {
        "role": "assistant", "content": "Searching.", "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "search", "arguments": '{"from":"LIS","to":"BER"}'}},
            {"id": "", "type": "function",
             "function": {"name": "search", "arguments": '{"from": "LIS", "to": "MUC"}'}}]}
    assert record["messages"][4] == {"role": "tool", "tool_call_id": "",
                                     "content": '{"flights":[]}', "is_error": True,
                                     "error": "no route"}


def test_anthropic_record_shape() -> None:
    record = to_anthropic(EPISODE)
    assert record["system"] == "Book what is asked."
    assert record["tools"][0] == {"name": "search", "description": "Search.", "input_schema": {
        "type": "object", "properties": {"from": {"type": "string"}}}, "x-effect": "read"}
    assert record["messages"][2] == {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "c1", "content": "2 flights"},
        {"type": "tool_result", "tool_use_id": "", "content": '{"flights":[]}', "is_error": True}]}


def _comparable(episode: dict) -> bool:
    """Episodes whose tool calls openai-chat can hold: no denial, no step-level effect."""
    steps = episode["steps"]
    return not any(s.get("status") == "denied" or "effect" in s for s in steps)


def test_native_samples_round_trip_through_openai_chat(tmp_path: Path) -> None:
    if not NATIVE_SAMPLES.is_dir():
        pytest.skip(f"no native samples at {NATIVE_SAMPLES}")
    with open_store(tmp_path / "native.duckdb") as store:
        store.ingest([NATIVE_SAMPLES])
        stored = {(uri, line): eid for uri, line, eid in store.sql(
            "SELECT source_uri, source_line, episode_id FROM episodes").rows()}
        episodes = []
        for path in sorted(NATIVE_SAMPLES.glob("*.jsonl")):
            for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
                if (str(path), number) in stored:
                    episode = json.loads(line)
                    if _comparable(episode):
                        episodes.append(episode)
        ids = [e["episode_id"] for e in episodes]
        expected = store.sql(
            "SELECT episode_id, call_index, call_id, tool_name, args, args_text, result_text,"
            " status, error, effect FROM tool_calls WHERE list_contains($ids, episode_id)"
            " ORDER BY episode_id, call_index", {"ids": ids}).rows()
    assert len(expected) >= 5, "the native samples should hold tool calls to compare"
    chat_path = tmp_path / "chat.jsonl"
    chat_path.write_bytes(b"".join(orjson.dumps(to_openai_chat(e)) + b"\n" for e in episodes))
    with open_store(tmp_path / "chat.duckdb") as store:
        report = store.ingest([chat_path], format="openai-chat")
        assert (report.added, report.quarantined) == (len(episodes), 0)
        got = store.sql(
            "SELECT episode_id, call_index, call_id, tool_name, args, args_text, result_text,"
            " status, error, effect FROM tool_calls ORDER BY episode_id, call_index").rows()
    assert got == expected


@pytest.mark.parametrize("fmt", sorted(EMITTERS))
def test_emitted_records_are_auto_detected_as_their_format(fmt: str, tmp_path: Path) -> None:
    plain = {"episode_id": "p", "steps": [{"kind": "user", "text": "hi"}]}
    for number, episode in enumerate((EPISODE, plain)):
        path = tmp_path / f"{fmt}-{number}.jsonl"
        path.write_bytes(orjson.dumps(EMITTERS[fmt](episode)) + b"\n")
        detected = detect_format(Source(path)).name
        # A plain-text record reads alike in every message-log format; chat claims it.
        assert detected == (fmt if episode is EPISODE else "openai-chat")
