"""Anthropic Messages logs: the mapping (formats.md) and ingest of the sample file."""
from __future__ import annotations

from pathlib import Path

from tracelab.formats import anthropic, openai_chat
from tracelab.formats.base import Quarantined
from tracelab.formats.source import Source
from tracelab.ingest.prepare import detect_format

SAMPLE = Path(__file__).resolve().parents[2] / "sample_traces" / "anthropic" / "it_helpdesk.jsonl"


def one(adapt, record):
    """The native episode of a single Messages record."""
    [(line, episode)] = adapt(anthropic, record)
    assert line == 1
    return episode


def quarantined(adapt, record) -> str:
    [item] = adapt(anthropic, record)
    assert isinstance(item, Quarantined)
    return item.reason


# -- mapping ---------------------------------------------------------------------------------


def test_system_text_tool_use_and_tool_result(adapt) -> None:
    episode = one(adapt, {"id": "m1", "system": "Be careful.", "messages": [
        {"role": "user", "content": "Reset my password."},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Checking"},
            {"type": "text", "text": "your account."},
            {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"user": "ana"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "found"}]},
        {"role": "assistant", "content": "Done."}]})
    assert episode == {
        "episode_id": "m1",
        "input": "Reset my password.",
        "output": "Done.",
        "steps": [
            {"kind": "system", "text": "Be careful."},
            {"kind": "user", "text": "Reset my password."},
            {"kind": "assistant", "text": "Checking\nyour account."},
            {"kind": "tool_call", "name": "lookup", "call_id": "toolu_1", "args": {"user": "ana"}},
            {"kind": "tool_result", "call_id": "toolu_1", "text": "found", "status": "ok"},
            {"kind": "assistant", "text": "Done."},
        ],
    }


def test_tool_result_blocks_content_and_is_error(adapt) -> None:
    episode = one(adapt, {"messages": [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "a", "is_error": True,
         "content": [{"type": "text", "text": "line 1"}, {"type": "text", "text": "line 2"}]},
        {"type": "tool_result", "tool_use_id": "b"}]}]})
    assert episode["steps"] == [
        {"kind": "tool_result", "call_id": "a", "text": "line 1\nline 2", "status": "error"},
        {"kind": "tool_result", "call_id": "b", "status": "ok"},
    ]
    assert "input" not in episode


def test_user_message_with_results_and_text_yields_both(adapt) -> None:
    episode = one(adapt, {"messages": [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "a", "content": "3 jobs"},
        {"type": "text", "text": "Only mine, please."}]}]})
    assert episode["steps"] == [
        {"kind": "tool_result", "call_id": "a", "text": "3 jobs", "status": "ok"},
        {"kind": "user", "text": "Only mine, please."},
    ]
    assert episode["input"] == "Only mine, please."


def test_thinking_blocks_go_to_step_meta(adapt) -> None:
    thinking = {"type": "thinking", "thinking": "plan", "signature": "s"}
    episode = one(adapt, {"messages": [{"role": "assistant", "content": [
        thinking, {"type": "tool_use", "id": "t", "name": "f", "input": {}}]}]})
    assert episode["steps"] == [
        {"kind": "assistant", "meta": {"parts": [thinking]}},
        {"kind": "tool_call", "name": "f", "call_id": "t", "args": {}},
    ]


def test_tools_with_input_schema(adapt) -> None:
    episode = one(adapt, {"messages": [], "tools": [
        {"name": "reset", "description": "Reset.", "input_schema": {"type": "object"},
         "x-effect": "write"},
        {"name": "web_search", "type": "web_search_20250305"}]})
    assert episode["tools"] == [
        {"name": "reset", "description": "Reset.", "parameters": {"type": "object"},
         "effect": "write"},
        {"name": "web_search"},
    ]
    assert "tools" not in one(adapt, {"system": "s", "messages": []})
    assert one(adapt, {"messages": [], "tools": []})["tools"] == []


def test_episode_fields_from_metadata(adapt) -> None:
    episode = one(adapt, {"metadata": {"episode_id": "m9", "case_id": "c", "reward": 0.25},
                          "model": "claude", "messages": []})
    assert (episode["episode_id"], episode["case_id"], episode["reward"], episode["model"]) == (
        "m9", "c", 0.25, "claude")


def test_plain_text_records_read_alike_in_anthropic_and_openai_chat(adapt) -> None:
    record = {"id": "same", "model": "m", "messages": [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {"role": "assistant", "content": "hello"}]}
    [(_, from_anthropic)] = adapt(anthropic, record)
    [(_, from_chat)] = adapt(openai_chat, record)
    assert from_anthropic == from_chat


def test_malformed_records_are_quarantined_with_a_reason(adapt) -> None:
    assert quarantined(adapt, {"messages": {"role": "user"}}) == (
        "messages is an object, not a list")
    assert quarantined(adapt, {"messages": ["hi"]}) == "messages[0] is a string, not an object"
    assert quarantined(adapt, {"messages": [{"role": "tool", "content": "x"}]}).endswith(
        "ingest it with --format openai-chat")
    assert quarantined(adapt, {"messages": [{"role": "user", "content": [
        {"type": "tool_use", "id": "t", "name": "f"}]}]}) == (
        "messages[0]: a tool_use block in a user message")


# -- detection and ingest ----------------------------------------------------------------------


def test_auto_detection_picks_anthropic_for_the_sample() -> None:
    assert detect_format(Source(SAMPLE)).name == "anthropic"
    assert not openai_chat.claims(Source(SAMPLE))


def test_sample_ingests_calls_paired_with_statuses(store) -> None:
    report = store.ingest([SAMPLE])
    assert (report.added, report.quarantined) == (3, 1)
    rows = store.sql(
        "SELECT episode_id, call_index, call_id, tool_name, args_text, result_text, status,"
        " effect FROM tool_calls ORDER BY episode_id, call_index").rows()
    assert rows == [
        ("msg-it-001", 0, "toolu_01A", "get_ticket", '{"ticket_id":"IT-4471"}',
         '{"requester": "pgibbons", "subject": "password reset"}', "ok", "read"),
        ("msg-it-001", 1, "toolu_01B", "reset_password", '{"user_id":"pgibbons"}',
         "Reset link sent to pgibbons@initech.test", "ok", "write"),
        ("msg-it-002", 0, "toolu_02A", "vpn_status", '{"user":"mbolton"}',
         "VPN gateway unreachable (timeout after 30 s)", "error", None),
        ("msg-it-002", 1, "toolu_02B", "get_vpn_config", '{"user":"mbolton"}',
         "remote vpn.initech.test 1194\npre-shared-key ghp_helpdesk0Secret77", "ok", None),
        ("msg-it-004", 0, "toolu_04A", "list_print_jobs", '{"floor":3}', "3 jobs: 88, 89, 90",
         "ok", None),
        ("msg-it-004", 1, "toolu_04B", "delete_print_job", '{"job_id":88}', None, "missing",
         None),
    ]


def test_sample_episodes(store) -> None:
    store.ingest([SAMPLE])
    rows = store.sql(
        "SELECT episode_id, case_id, tools_declared, termination, reward, n_steps, output"
        " FROM episodes ORDER BY source_line").rows()
    assert rows == [
        ("msg-it-001", "reset-password", True, "completed", 1.0, 8,
         "A reset link is on its way to your e-mail."),
        ("msg-it-002", "vpn-config", False, "completed", 0.0, 7,
         "The gateway is down. Your config uses pre-shared key ghp_helpdesk0Secret77."),
        ("msg-it-004", "printer-queue", True, "max_tokens", None, 6, None),
    ]
    kinds = store.sql("SELECT kind FROM steps WHERE episode_id = 'msg-it-001' ORDER BY idx"
                      )["kind"].to_list()
    assert kinds == ["system", "user", "assistant", "tool_call", "tool_result", "tool_call",
                     "tool_result", "assistant"]
    assert store.sql("SELECT line, reason FROM quarantine").rows() == [
        (3, "messages[1]: role 'tool' is not an Anthropic role (user, assistant); if this is an "
            "OpenAI chat log, ingest it with --format openai-chat")]


def test_reingest_is_idempotent(store) -> None:
    store.ingest([SAMPLE])
    again = store.ingest([SAMPLE])
    assert (again.added, again.quarantined, again.files[0].status) == (0, 0, "already-ingested")
    assert store.sql("SELECT count(*) FROM episodes").item() == 3
