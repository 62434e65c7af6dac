"""OpenAI Chat Completions logs: the mapping (formats.md) and ingest of the sample file."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from tracelab.formats import openai_chat
from tracelab.formats.base import Quarantined
from tracelab.formats.source import Source
from tracelab.ingest.prepare import detect_format

SAMPLE = Path(__file__).resolve().parents[2] / "sample_traces" / "openai-chat" / "travel_desk.jsonl"


def one(adapt, record):
    """The native episode of a single chat record."""
    [(line, episode)] = adapt(openai_chat, record)
    assert line == 1
    return episode


def quarantined(adapt, record) -> str:
    [item] = adapt(openai_chat, record)
    assert isinstance(item, Quarantined)
    return item.reason


# -- mapping ---------------------------------------------------------------------------------


def test_tool_calls_become_tool_call_steps_and_tool_messages_results(adapt) -> None:
    episode = one(adapt, {"id": "e1", "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Oslo?"},
        {"role": "assistant", "content": "Checking.", "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "get_weather", "arguments": "{\"city\": \"Oslo\"}"}},
            {"id": "call_2", "type": "function",
             "function": {"name": "get_time", "arguments": {"tz": "CET"}}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "-3 C"},
        {"role": "tool", "tool_call_id": "call_2", "name": "get_time", "content": "boom",
         "error": "tz db missing"},
        {"role": "assistant", "content": "It is -3 C."}]})
    assert episode == {
        "episode_id": "e1",
        "input": "Weather in Oslo?",
        "output": "It is -3 C.",
        "steps": [
            {"kind": "system", "text": "Be brief."},
            {"kind": "user", "text": "Weather in Oslo?"},
            {"kind": "assistant", "text": "Checking."},
            {"kind": "tool_call", "name": "get_weather", "call_id": "call_1",
             "args": "{\"city\": \"Oslo\"}"},
            {"kind": "tool_call", "name": "get_time", "call_id": "call_2", "args": {"tz": "CET"}},
            {"kind": "tool_result", "call_id": "call_1", "text": "-3 C", "status": "ok"},
            {"kind": "tool_result", "call_id": "call_2", "name": "get_time", "text": "boom",
             "status": "error", "error": "tz db missing"},
            {"kind": "assistant", "text": "It is -3 C."},
        ],
    }


def test_is_error_true_marks_an_error_but_other_truthy_values_do_not(adapt) -> None:
    episode = one(adapt, {"messages": [
        {"role": "tool", "tool_call_id": "a", "content": "x", "is_error": True},
        {"role": "tool", "tool_call_id": "b", "content": "y", "is_error": "true"},
        {"role": "tool", "tool_call_id": "c", "content": "z", "error": None}]})
    assert [s["status"] for s in episode["steps"]] == ["error", "ok", "ok"]


def test_legacy_function_call_and_function_result(adapt) -> None:
    episode = one(adapt, {"messages": [
        {"role": "user", "content": "2+2?"},
        {"role": "assistant", "content": None,
         "function_call": {"name": "calc", "arguments": "{\"expr\": \"2+2\"}"}},
        {"role": "function", "name": "calc", "content": "4"}]})
    assert episode["steps"][1:] == [
        {"kind": "tool_call", "name": "calc", "args": "{\"expr\": \"2+2\"}"},
        {"kind": "tool_result", "name": "calc", "text": "4", "status": "ok"},
    ]
    assert "output" not in episode


def test_blank_call_ids_are_kept_for_order_pairing(adapt) -> None:
    episode = one(adapt, {"messages": [
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "", "content": "r"}]})
    assert episode["steps"] == [
        {"kind": "tool_call", "name": "f", "call_id": "", "args": "{}"},
        {"kind": "tool_result", "call_id": "", "text": "r", "status": "ok"},
    ]


def test_tools_absent_means_unknown_and_empty_list_means_none_offered(adapt) -> None:
    assert "tools" not in one(adapt, {"messages": []})
    assert one(adapt, {"messages": [], "tools": []})["tools"] == []


def test_tool_definitions_with_effect(adapt) -> None:
    episode = one(adapt, {"messages": [], "tools": [
        {"type": "function", "function": {"name": "pay", "description": "Pay a bill.",
                                          "parameters": {"type": "object"}, "x-effect": "write"}},
        {"type": "function", "effect": "read", "function": {"name": "balance"}}]})
    assert episode["tools"] == [
        {"name": "pay", "description": "Pay a bill.", "parameters": {"type": "object"},
         "effect": "write"},
        {"name": "balance", "effect": "read"},
    ]


def test_episode_fields_and_meta(adapt) -> None:
    episode = one(adapt, {"id": "e7", "model": "gpt-4o", "region": "eu",
                          "metadata": {"case_id": "c7", "termination": "completed",
                                       "reward": 1}, "messages": []})
    assert episode["episode_id"] == "e7"
    assert (episode["model"], episode["case_id"], episode["termination"], episode["reward"]) == (
        "gpt-4o", "c7", "completed", 1)
    assert episode["meta"] == {"region": "eu",
                               "metadata": {"case_id": "c7", "termination": "completed",
                                            "reward": 1}}


def test_developer_is_system_and_image_parts_go_to_meta(adapt) -> None:
    image = {"type": "image_url", "image_url": {"url": "https://x.test/a.png"}}
    episode = one(adapt, {"messages": [
        {"role": "developer", "content": "Rules."},
        {"role": "user", "name": "ines", "content": [{"type": "text", "text": "Look"}, image]}]})
    assert episode["steps"] == [
        {"kind": "system", "text": "Rules."},
        {"kind": "user", "text": "Look", "meta": {"name": "ines", "parts": [image]}},
    ]
    assert episode["input"] == "Look"


def test_a_bare_message_array_is_one_episode(adapt, tmp_path: Path) -> None:
    [(line, episode)] = adapt(openai_chat, [{"role": "user", "content": "hi"},
                                            {"role": "assistant", "content": "hello"}])
    digest = Source(tmp_path / "traces.jsonl").content_hash
    assert episode["episode_id"] == f"{digest[:16]}:1"
    assert (episode["input"], episode["output"]) == ("hi", "hello")


def test_malformed_records_are_quarantined_with_a_reason(adapt) -> None:
    assert quarantined(adapt, {"messages": "hi"}) == "messages is a string, not a list"
    assert quarantined(adapt, {"messages": [{"content": "x"}]}) == "messages[0]: no role"
    assert quarantined(adapt, {"messages": [{"role": "bot"}]}).startswith(
        "messages[0]: unknown role 'bot'")
    assert quarantined(adapt, {"prompt": "x"}).startswith("not a chat record")
    assert quarantined(adapt, {"messages": [{"role": "assistant", "tool_calls": [{"id": "a"}]}]}
                       ) == "messages[0].tool_calls[0].function is null, not an object"


def test_an_anthropic_block_is_quarantined_with_a_hint(adapt) -> None:
    reason = quarantined(adapt, {"messages": [{"role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": "f", "input": {}}]}]})
    assert reason.endswith("ingest this file with --format anthropic")


# -- detection -------------------------------------------------------------------------------


def test_auto_detection_picks_openai_chat_for_the_sample() -> None:
    assert detect_format(Source(SAMPLE)).name == "openai-chat"


def test_chat_does_not_claim_anthropic_or_native_records(write_jsonl) -> None:
    anthropic_like = write_jsonl([{"system": "s", "messages": []}], "a.jsonl")
    native = write_jsonl([{"episode_id": "e", "steps": []}], "n.jsonl")
    assert not openai_chat.claims(Source(anthropic_like))
    assert not openai_chat.claims(Source(native))
    bare = write_jsonl([[{"role": "user", "content": "hi"}]], "b.jsonl")
    assert detect_format(Source(bare)).name == "openai-chat"


# -- ingest of the sample --------------------------------------------------------------------


def test_sample_ingests_calls_paired_with_statuses(store) -> None:
    report = store.ingest([SAMPLE])
    assert (report.added, report.quarantined) == (4, 2)
    rows = store.sql(
        "SELECT episode_id, call_index, call_id, tool_name, args_text, status, error, effect,"
        " result_step_idx FROM tool_calls ORDER BY episode_id, call_index").rows()
    assert rows == [
        ("chat-tr-001", 0, "call_Q1s8", "search_flights",
         '{"origin": "LIS", "destination": "BER", "date": "2027-03-12"}', "ok", None, "read", 4),
        ("chat-tr-001", 1, "call_B7k2", "book_flight", '{"flight_id": "FR1884"}', "ok", None,
         "write", 6),
        ("chat-tr-002", 0, "call_c01", "cancel_booking", '{"pnr":"ZZ9ABC"}', "error",
         "booking not found", None, 3),
        ("chat-tr-002", 1, "call_c02", "get_agency_config", "{}", "ok", None, None, 4),
        ("chat-tr-003", 0, None, "get_weather", '{"city": "Berlin"}', "ok", None, None, 2),
        ("chat-tr-003", 1, "", "get_seat_map", '{"pnr": "QX7T2L"}', "ok", None, None, 6),
        ("chat-tr-003", 2, "", "get_seat_map", '{"pnr": "QX7T2M"}', "error", None, None, 7),
        ("chat-tr-003", 3, "call_s9", "change_seat", '{"pnr": "QX7T2L", "seat": "14C"}',
         "missing", None, None, None),
    ]


def test_sample_episodes_tools_declared_termination_reward(store) -> None:
    store.ingest([SAMPLE])
    digest = Source(SAMPLE).content_hash[:16]
    rows = store.sql(
        "SELECT episode_id, case_id, tools_declared, termination, reward, output IS NULL"
        " FROM episodes ORDER BY source_line").rows()
    assert rows == [
        ("chat-tr-001", "book-cheapest", True, "completed", 1.0, False),
        ("chat-tr-002", "cancel-unknown-pnr", False, "completed", 0.0, False),
        ("chat-tr-003", "seat-change", True, "max_steps", None, True),
        (f"{digest}:6", None, False, None, None, False),
    ]
    definitions = store.sql(
        "SELECT name, effect FROM tool_definitions WHERE episode_id = 'chat-tr-001'"
        " ORDER BY position").rows()
    assert definitions == [("search_flights", "read"), ("book_flight", "write"),
                           ("cancel_booking", "write")]
    assert store.sql("SELECT count(*) FROM tool_definitions WHERE episode_id = 'chat-tr-003'"
                     ).item() == 0


def test_sample_malformed_records_are_quarantined_by_line(store) -> None:
    store.ingest([SAMPLE])
    assert store.sql("SELECT line, reason FROM quarantine ORDER BY line").rows() == [
        (5, "messages is an object, not a list"),
        (7, "messages[1]: no role"),
    ]


def test_sample_leak_is_in_the_transcript(store) -> None:
    store.ingest([SAMPLE])
    leaked = store.sql(
        "SELECT DISTINCT episode_id FROM steps WHERE text LIKE '%sk-test-51HxTRAVEL9fQ2%'"
        " ORDER BY 1").rows()
    assert leaked == [("chat-tr-002",)]


def test_reingest_is_idempotent(store, tmp_path: Path) -> None:
    store.ingest([SAMPLE])
    again = store.ingest([SAMPLE], format="openai-chat")
    assert (again.added, again.quarantined, again.files[0].status) == (0, 0, "already-ingested")
    copy = shutil.copy(SAMPLE, tmp_path / "copy.jsonl")
    # Same bytes, same content hash: the fallback episode id is the same too.
    assert store.ingest([copy]).files[0].status == "already-ingested"
    assert store.sql("SELECT count(*) FROM episodes").item() == 4
    assert store.sql("SELECT count(*) FROM quarantine").item() == 2


def test_json_files_hold_an_array_of_records_or_one_message_array(store, tmp_path: Path) -> None:
    records = tmp_path / "records.json"
    records.write_text(json.dumps([
        {"id": "j1", "messages": [{"role": "user", "content": "a"}]},
        {"id": "j2", "messages": "broken"},
    ], indent=2), encoding="utf-8")
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps([{"role": "user", "content": "b"},
                                {"role": "assistant", "content": "c"}], indent=2),
                    encoding="utf-8")
    report = store.ingest([records, bare])
    assert [(f.format, f.added, f.quarantined) for f in report.files] == [
        ("openai-chat", 1, 1), ("openai-chat", 1, 0)]
    assert store.sql("SELECT line, reason FROM quarantine").rows() == [
        (2, "messages is a string, not a list")]
    digest = Source(bare).content_hash[:16]
    assert store.sql("SELECT episode_id, input, output FROM episodes ORDER BY 1").rows() == [
        (f"{digest}:1", "b", "c"), ("j1", "a", None)]
