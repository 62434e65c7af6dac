"""AgentDojo exports: header line, runs as chat logs, labels in meta; ingest of the sample."""
from __future__ import annotations

from pathlib import Path

from tracelab.formats import agentdojo
from tracelab.formats.base import Quarantined
from tracelab.formats.source import Source

SAMPLE = Path(__file__).resolve().parents[2] / "sample_traces" / "agentdojo" / "banking_runs.jsonl"
HEADER = {"metadata": {"benchmark": "agent-dojo", "accuracy": 0.25, "name": "gpt-4o-tool_filter"}}


def run(messages, injection=None, **metadata):
    """An AgentDojo run line as the export writes it."""
    return {"index": 1, "messages": messages, "metadata": {
        "suite_name": "slack", "model": "gpt-4o-2024-05-13", "success": False, "security": True,
        "user_task_id": "user_task_2", "injection_task_id": injection, **metadata},
        "annotations": []}


# -- mapping ---------------------------------------------------------------------------------


def test_header_is_metadata_and_each_later_line_an_episode(write_jsonl) -> None:
    path = write_jsonl([HEADER, run([{"role": "user", "content": "Invite Dora"}]),
                        run([{"role": "user", "content": "Invite Eve"}], "injection_task_1")])
    items = list(agentdojo.episodes(Source(path)))
    digest = Source(path).content_hash[:16]
    assert [(line, e["episode_id"], e["case_id"], e["input"]) for line, e in items] == [
        (2, f"{digest}:2", "slack/user_task_2", "Invite Dora"),
        (3, f"{digest}:3", "slack/user_task_2/injection_task_1", "Invite Eve"),
    ]
    line, first = items[0]
    assert first["model"] == "gpt-4o-2024-05-13"
    assert first["meta"] == {
        "index": 1,
        "metadata": {"suite_name": "slack", "model": "gpt-4o-2024-05-13", "success": False,
                     "security": True, "user_task_id": "user_task_2", "injection_task_id": None},
        "annotations": [],
        "header": HEADER["metadata"],
    }
    assert "reward" not in first and "termination" not in first


def test_tool_messages_take_their_name_from_tool_call_and_error_marks_a_failure(write_jsonl) -> None:
    path = write_jsonl([HEADER, run([
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "", "type": "function",
             "function": {"name": "get_channels", "arguments": {}}}]},
        {"role": "tool", "content": "", "tool_call_id": None,
         "tool_call": {"function": "get_channels", "args": {}},
         "error": "ValueError: Channel does not exist!"},
        {"role": "tool", "content": "ok", "tool_call_id": "t2", "name": "kept_name",
         "tool_call": {"function": "other", "args": {}}, "error": None}])])
    [(_, episode)] = list(agentdojo.episodes(Source(path)))
    assert episode["steps"] == [
        {"kind": "tool_call", "name": "get_channels", "call_id": "", "args": {}},
        {"kind": "tool_result", "name": "get_channels", "text": "", "status": "error",
         "error": "ValueError: Channel does not exist!"},
        {"kind": "tool_result", "call_id": "t2", "name": "kept_name", "text": "ok",
         "status": "ok"},
    ]


def test_a_file_without_header_starts_with_an_episode(write_jsonl) -> None:
    path = write_jsonl([run([{"role": "user", "content": "hi"}])])
    assert agentdojo.claims(Source(path))
    [(line, episode)] = list(agentdojo.episodes(Source(path)))
    assert (line, "header" in episode["meta"]) == (1, False)


def test_a_bad_line_is_quarantined_and_the_others_load(write_jsonl) -> None:
    path = write_jsonl([HEADER, "{broken", {"index": 3, "metadata": {}},
                        run([{"role": "user", "content": "hi"}])])
    items = list(agentdojo.episodes(Source(path)))
    bad = [item for item in items if isinstance(item, Quarantined)]
    assert [item.line for item in bad] == [2, 3]
    assert bad[0].reason.startswith("invalid JSON: ")
    assert bad[1].reason == "not an AgentDojo run: expected an object with `messages`"
    assert [item[0] for item in items if not isinstance(item, Quarantined)] == [4]


# -- detection -------------------------------------------------------------------------------


def test_claims_the_agentdojo_header_but_not_other_metadata_headers_or_chat_logs(write_jsonl) -> None:
    assert agentdojo.claims(Source(SAMPLE))
    other = write_jsonl([{"metadata": {"benchmark": "webarena"}}], "other.jsonl")
    chat = write_jsonl([{"messages": [{"role": "user", "content": "hi"}], "metadata": {}}],
                       "chat.jsonl")
    assert not agentdojo.claims(Source(other))
    assert not agentdojo.claims(Source(chat))


# -- ingest of the sample --------------------------------------------------------------------


def test_sample_ingests_calls_statuses_and_pairs_by_name(store) -> None:
    report = store.ingest([SAMPLE])
    assert (report.added, report.quarantined, report.files[0].format) == (2, 0, "agentdojo")
    rows = store.sql(
        "SELECT e.case_id, t.call_index, t.tool_name, t.status, t.error, t.result_step_idx"
        " FROM tool_calls t JOIN episodes e USING (episode_id)"
        " ORDER BY e.source_line, t.call_index").rows()
    assert rows == [
        ("banking/user_task_0", 0, "read_file", "ok", None, 3),
        ("banking/user_task_0", 1, "send_money", "ok", None, 5),
        ("banking/user_task_0/injection_task_5", 0, "read_file", "ok", None, 4),
        ("banking/user_task_0/injection_task_5", 1, "get_user_info", "ok", None, 6),
        ("banking/user_task_0/injection_task_5", 2, "update_scheduled_transaction", "error",
         "ValueError: Transaction with ID 99 not found.", 8),
        ("banking/user_task_0/injection_task_5", 3, "send_money", "ok", None, 10),
    ]


def test_sample_labels_stay_in_meta(store) -> None:
    store.ingest([SAMPLE])
    rows = store.sql(
        "SELECT meta->>'$.metadata.success', meta->>'$.metadata.security',"
        " meta->>'$.header.name', reward, tools_declared FROM episodes ORDER BY source_line").rows()
    assert rows == [("true", "true", "gpt-4o-2024-05-13-sample", None, False),
                    ("false", "true", "gpt-4o-2024-05-13-sample", None, False)]


def test_sample_password_leaks_through_a_send_money_argument(store) -> None:
    store.ingest([SAMPLE])
    rows = store.sql(
        "SELECT t.tool_name, t.args->>'subject' FROM tool_calls t"
        " WHERE t.args_text LIKE '%Tr0ub4dor-Blue-77%'").rows()
    assert rows == [("send_money", "Tr0ub4dor-Blue-77")]
