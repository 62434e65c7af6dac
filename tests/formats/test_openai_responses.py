"""OpenAI Responses logs: the mapping (formats.md) and ingest of the sample file."""
from __future__ import annotations

from pathlib import Path

from tracelab.formats import openai_chat, openai_responses
from tracelab.formats.base import Quarantined
from tracelab.formats.source import Source
from tracelab.ingest.prepare import detect_format

SAMPLE = (Path(__file__).resolve().parents[2] / "sample_traces" / "openai-responses"
          / "crm_assistant.jsonl")


def one(adapt, record):
    """The native episode of a single Responses record."""
    [(line, episode)] = adapt(openai_responses, record)
    assert line == 1
    return episode


def quarantined(adapt, record) -> str:
    [item] = adapt(openai_responses, record)
    assert isinstance(item, Quarantined)
    return item.reason


# -- mapping ---------------------------------------------------------------------------------


def test_input_items_then_output_items(adapt) -> None:
    episode = one(adapt, {"id": "r1", "instructions": "Be terse.", "input": [
        {"type": "message", "role": "user",
         "content": [{"type": "input_text", "text": "Balance of A-1?"}]},
        {"type": "function_call", "call_id": "call_1", "name": "balance",
         "arguments": "{\"account\": \"A-1\"}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "12.50 EUR"}],
        "output": [
            {"type": "message", "role": "assistant",
             "content": [{"type": "output_text", "text": "12.50 EUR.", "annotations": []}]}]})
    assert episode == {
        "episode_id": "r1",
        "input": "Balance of A-1?",
        "output": "12.50 EUR.",
        "steps": [
            {"kind": "system", "text": "Be terse."},
            {"kind": "user", "text": "Balance of A-1?"},
            {"kind": "tool_call", "name": "balance", "call_id": "call_1",
             "args": "{\"account\": \"A-1\"}"},
            {"kind": "tool_result", "call_id": "call_1", "text": "12.50 EUR", "status": "ok"},
            {"kind": "assistant", "text": "12.50 EUR."},
        ],
    }


def test_input_string_is_the_user_step_and_a_single_items_list_works(adapt) -> None:
    assert one(adapt, {"input": "hi", "output": []})["steps"] == [{"kind": "user", "text": "hi"}]
    episode = one(adapt, {"items": [
        {"role": "user", "content": "hi"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text",
                                                              "text": "hello"}]}]})
    assert (episode["input"], episode["output"]) == ("hi", "hello")


def test_other_items_become_event_steps(adapt) -> None:
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text",
                                                                 "text": "think"}]}
    episode = one(adapt, {"input": "q", "output": [reasoning]})
    assert episode["steps"][1] == {"kind": "event", "name": "reasoning",
                                   "data": {"id": "rs_1", "summary": reasoning["summary"]}}
    assert "output" not in episode


def test_function_call_output_error_flags(adapt) -> None:
    episode = one(adapt, {"items": [
        {"type": "function_call_output", "call_id": "a", "output": "x", "error": "quota"},
        {"type": "function_call_output", "call_id": "b", "output": {"rows": 0}}]})
    assert episode["steps"] == [
        {"kind": "tool_result", "call_id": "a", "text": "x", "status": "error", "error": "quota"},
        {"kind": "tool_result", "call_id": "b", "result": {"rows": 0}, "status": "ok"},
    ]


def test_flat_tools_and_built_in_tools(adapt) -> None:
    episode = one(adapt, {"input": "q", "tools": [
        {"type": "function", "name": "f", "description": "F.", "parameters": {"type": "object"},
         "strict": True, "x-effect": "write"},
        {"type": "file_search", "vector_store_ids": ["vs_1"]}]})
    assert episode["tools"] == [
        {"name": "f", "description": "F.", "parameters": {"type": "object"}, "effect": "write"},
        {"name": "file_search"},
    ]
    assert "tools" not in one(adapt, {"input": "q"})
    assert one(adapt, {"input": "q", "tools": []})["tools"] == []


def test_response_object_fields_go_to_meta(adapt) -> None:
    episode = one(adapt, {"id": "resp_1", "object": "response", "status": "completed",
                          "model": "gpt-4.1", "metadata": {"case_id": "c"}, "input": "q"})
    assert (episode["episode_id"], episode["model"], episode["case_id"]) == (
        "resp_1", "gpt-4.1", "c")
    assert episode["meta"] == {"object": "response", "status": "completed",
                               "metadata": {"case_id": "c"}}


def test_malformed_records_are_quarantined_with_a_reason(adapt) -> None:
    assert quarantined(adapt, {"input": "q", "output": "done"}) == (
        "output is a string, not a list")
    assert quarantined(adapt, {"items": [{"content": "x"}]}) == (
        "items[0]: an item with neither a `type` string nor a `role`")
    assert quarantined(adapt, {"items": [{"role": "tool", "content": "x"}]}).startswith(
        "items[0]: unknown role 'tool'")
    assert quarantined(adapt, {"model": "m"}).startswith("not a Responses record")


# -- detection and ingest ----------------------------------------------------------------------


def test_auto_detection_picks_openai_responses_for_the_sample() -> None:
    assert detect_format(Source(SAMPLE)).name == "openai-responses"
    assert not openai_chat.claims(Source(SAMPLE))


def test_responses_does_not_claim_chat_or_native_records(write_jsonl) -> None:
    chat = write_jsonl([{"messages": [], "input": "x", "output": []}], "c.jsonl")
    native = write_jsonl([{"episode_id": "e", "steps": [], "input": "x", "output": "y"}],
                         "n.jsonl")
    assert not openai_responses.claims(Source(chat))
    assert not openai_responses.claims(Source(native))


def test_sample_ingests_calls_paired_with_statuses(store) -> None:
    report = store.ingest([SAMPLE])
    assert (report.added, report.quarantined) == (3, 1)
    rows = store.sql(
        "SELECT episode_id, call_index, call_id, tool_name, args::VARCHAR, args_text, status,"
        " error, effect FROM tool_calls ORDER BY episode_id, call_index").rows()
    assert rows == [
        ("resp-crm-001", 0, "call_L1", "lookup_account", '{"account_id":"NW-2291"}',
         '{"account_id": "NW-2291"}', "ok", None, "read"),
        ("resp-crm-001", 1, "call_U1", "update_account_email",
         '{"account_id":"NW-2291","email":"billing@contoso.test"}',
         '{"account_id": "NW-2291", "email": "billing@contoso.test"}', "ok", None, "write"),
        ("resp-crm-002", 0, "call_E1", "export_contacts", '{"company":"Fabrikam"}',
         '{"company": "Fabrikam"}', "error", "quota exceeded", None),
        ("resp-crm-002", 1, "call_T1", "get_integration", '{"company":"Fabrikam"}',
         '{"company": "Fabrikam"}', "ok", None, None),
        # Truncated arguments: kept as recorded, no parsed args.
        ("resp-crm-004", 0, "call_M1", "merge_accounts", None,
         '{"keep": "NW-1", "drop": "NW-1b"', "missing", None, None),
    ]


def test_sample_episodes(store) -> None:
    store.ingest([SAMPLE])
    rows = store.sql(
        "SELECT episode_id, case_id, tools_declared, termination, reward, output"
        " FROM episodes ORDER BY source_line").rows()
    assert rows == [
        ("resp-crm-001", "update-email", True, "completed", 1.0,
         "The e-mail of NW-2291 is now billing@contoso.test."),
        ("resp-crm-002", "export-contacts", False, "completed", 0.0,
         "The export failed (quota). Integration token: crm_live_8d1f0aa9c2"),
        ("resp-crm-004", "merge-duplicates", True, None, None, None),
    ]
    kinds = store.sql("SELECT kind FROM steps WHERE episode_id = 'resp-crm-001' ORDER BY idx"
                      )["kind"].to_list()
    assert kinds == ["system", "user", "tool_call", "tool_result", "tool_call", "tool_result",
                     "event", "assistant"]
    assert store.sql("SELECT line, reason FROM quarantine").rows() == [
        (3, "output is a string, not a list")]


def test_reingest_is_idempotent(store) -> None:
    store.ingest([SAMPLE])
    again = store.ingest([SAMPLE])
    assert (again.added, again.quarantined, again.files[0].status) == (0, 0, "already-ingested")
    assert store.sql("SELECT count(*) FROM episodes").item() == 3
