"""OpenHands output.jsonl: the event-stream mapping and ingest of the hand-written sample."""
from __future__ import annotations

import json
from pathlib import Path

from tracelab.formats import openhands
from tracelab.formats.base import Quarantined
from tracelab.formats.source import Source

SAMPLE = Path(__file__).resolve().parents[2] / "sample_traces" / "openhands" / "output.jsonl"


def tool_metadata(call_id, name, response_id=None, text=None, arguments=None):
    metadata = {"function_name": name, "tool_call_id": call_id, "total_calls_in_response": 1}
    if response_id is not None:
        metadata["model_response"] = {"id": response_id, "choices": [{"message": {
            "role": "assistant", "content": text, "tool_calls": [
                {"id": call_id, "type": "function",
                 "function": {"name": name, "arguments": json.dumps(arguments)}}]}}]}
    return metadata


def output(history, **fields):
    """One output.jsonl line."""
    return {"instance_id": "org__repo-1", "instruction": "Fix it.",
            "metadata": {"agent_class": "CodeActAgent", "llm_config": {"model": "gpt-4o"}},
            "history": history, "metrics": {"accumulated_cost": 0.1}, "error": None,
            "test_result": {"git_patch": ""}, **fields}


def one(adapt, record) -> dict:
    [(line, episode)] = adapt(openhands, record)
    assert line == 1
    return episode


# -- mapping ---------------------------------------------------------------------------------


def test_events_map_to_messages_calls_results_and_events(adapt) -> None:
    episode = one(adapt, output([
        {"id": 0, "timestamp": "2025-05-01T10:00:00", "source": "agent", "action": "system",
         "args": {"content": "You are OpenHands.", "openhands_version": "0.35.0", "tools": [
             {"type": "function", "function": {"name": "execute_bash", "description": "Run.",
                                               "parameters": {"type": "object"}}}]}},
        {"id": 1, "timestamp": "2025-05-01T10:00:01", "source": "user", "action": "message",
         "args": {"content": "Fix it.", "image_urls": None}},
        {"id": 2, "timestamp": "2025-05-01T10:00:02", "source": "user", "action": "recall",
         "args": {"query": "Fix it."}},
        {"id": 3, "timestamp": "2025-05-01T10:00:05", "source": "agent", "action": "run",
         "args": {"command": "ls", "thought": "Listing."},
         "tool_call_metadata": tool_metadata("toolu_01", "execute_bash", "gen-1", "Listing.",
                                             {"command": "ls"})},
        {"id": 4, "timestamp": "2025-05-01T10:00:06", "source": "agent", "cause": 3,
         "observation": "run", "content": "a.py", "success": True,
         "extras": {"metadata": {"exit_code": 0}},
         "tool_call_metadata": tool_metadata("toolu_01", "execute_bash")},
        {"id": 5, "timestamp": "2025-05-01T10:00:07", "source": "agent", "action": "message",
         "args": {"content": "Done."}},
    ]))
    assert episode == {
        "episode_id": episode["episode_id"],
        "agent_version": "0.35.0",
        "case_id": "org__repo-1",
        "agent": "CodeActAgent",
        "model": "gpt-4o",
        "started_at": "2025-05-01T10:00:00",
        "ended_at": "2025-05-01T10:00:07",
        "meta": {"instruction": "Fix it.",
                 "metadata": {"agent_class": "CodeActAgent", "llm_config": {"model": "gpt-4o"}},
                 "metrics": {"accumulated_cost": 0.1}, "test_result": {"git_patch": ""}},
        "input": "Fix it.",
        "output": "Done.",
        "tools": [{"name": "execute_bash", "description": "Run.",
                   "parameters": {"type": "object"}}],
        "steps": [
            {"kind": "system", "text": "You are OpenHands.", "ts": "2025-05-01T10:00:00"},
            {"kind": "user", "text": "Fix it.", "ts": "2025-05-01T10:00:01"},
            {"kind": "event", "name": "recall", "data": {"query": "Fix it."},
             "ts": "2025-05-01T10:00:02"},
            {"kind": "assistant", "text": "Listing.", "ts": "2025-05-01T10:00:05"},
            {"kind": "tool_call", "name": "execute_bash", "call_id": "toolu_01",
             "args": "{\"command\": \"ls\"}", "ts": "2025-05-01T10:00:05"},
            {"kind": "tool_result", "call_id": "toolu_01", "name": "execute_bash", "text": "a.py",
             "status": "ok", "meta": {"exit_code": 0}, "ts": "2025-05-01T10:00:06"},
            {"kind": "assistant", "text": "Done.", "ts": "2025-05-01T10:00:07"},
        ],
    }


def test_failed_commands_and_editor_errors_are_errors(adapt) -> None:
    episode = one(adapt, output([
        {"id": 1, "source": "agent", "observation": "run", "content": "make: *** Error 2",
         "message": "Command `make` executed with exit code 2.", "success": False,
         "extras": {"metadata": {"exit_code": 2}},
         "tool_call_metadata": tool_metadata("t1", "execute_bash")},
        {"id": 2, "source": "agent", "observation": "edit",
         "content": "ERROR:\nNo replacement was performed.",
         "tool_call_metadata": tool_metadata("t2", "str_replace_editor")},
        {"id": 3, "source": "agent", "observation": "error",
         "content": "Parameter 'command' is expected to be one of ['view']."},
    ]))
    assert episode["steps"] == [
        {"kind": "tool_result", "call_id": "t1", "name": "execute_bash",
         "text": "make: *** Error 2", "status": "error",
         "error": "Command `make` executed with exit code 2.", "meta": {"exit_code": 2}},
        {"kind": "tool_result", "call_id": "t2", "name": "str_replace_editor",
         "text": "ERROR:\nNo replacement was performed.", "status": "error",
         "error": "No replacement was performed."},
        {"kind": "error", "text": "Parameter 'command' is expected to be one of ['view']."},
    ]


def test_a_rejected_action_is_denied_and_an_error_observation_on_a_call_is_an_error(adapt) -> None:
    episode = one(adapt, output([
        {"id": 1, "source": "user", "observation": "user_rejected",
         "content": "Action has been rejected by the user! Reason: not on prod.",
         "tool_call_metadata": tool_metadata("t1", "execute_bash")},
        {"id": 2, "source": "agent", "observation": "error", "content": "Missing `path`.",
         "tool_call_metadata": tool_metadata("t2", "str_replace_editor")},
    ]))
    assert [(s["status"], s["error"]) for s in episode["steps"]] == [
        ("denied", "Action has been rejected by the user! Reason: not on prod."),
        ("error", "Missing `path`."),
    ]


def test_one_response_with_two_calls_gives_its_text_once(adapt) -> None:
    response = tool_metadata("c1", "think", "gen-9", "Two things.", {"thought": "a"})
    second = dict(response, tool_call_id="c2")
    episode = one(adapt, output([
        {"id": 1, "source": "agent", "action": "think", "args": {"thought": "a"},
         "tool_call_metadata": response},
        {"id": 2, "source": "agent", "action": "think", "args": {"thought": "b"},
         "tool_call_metadata": second},
    ]))
    assert episode["steps"] == [
        {"kind": "assistant", "text": "Two things."},
        {"kind": "tool_call", "name": "think", "call_id": "c1", "args": "{\"thought\": \"a\"}"},
        {"kind": "tool_call", "name": "think", "call_id": "c2", "args": {"thought": "b"}},
    ]


def test_error_is_termination_error_and_finish_is_completed(adapt) -> None:
    finish = {"id": 1, "source": "agent", "action": "finish", "args": {"final_thought": "ok"},
              "tool_call_metadata": tool_metadata("f1", "finish")}
    failed = one(adapt, output([finish], error="RuntimeError: Agent reached maximum iteration"))
    assert (failed["termination"], failed["error"]) == (
        "error", "RuntimeError: Agent reached maximum iteration")
    assert one(adapt, output([finish]))["termination"] == "completed"
    assert "termination" not in one(adapt, output([]))


def test_older_outputs_with_action_observation_pairs_read_the_same(adapt) -> None:
    pair = [{"id": 1, "source": "user", "action": "message", "args": {"content": "Fix it."}},
            {"id": 2, "source": "agent", "observation": "null", "content": "", "extras": {}}]
    episode = one(adapt, output([pair]))
    assert episode["steps"] == [{"kind": "user", "text": "Fix it."},
                                {"kind": "event", "name": "null"}]


def test_malformed_records_are_quarantined(adapt) -> None:
    items = adapt(openhands, output("not a list"), output([{"id": 1, "source": "agent"}]),
                  {"instance_id": "x"})
    assert [(i.line, i.reason) for i in items if isinstance(i, Quarantined)] == [
        (1, "history is a string, not a list"),
        (2, "history[0]: neither an action nor an observation"),
        (3, "not an OpenHands output record: no `history`"),
    ]


# -- detection -------------------------------------------------------------------------------


def test_claims_outputs_but_not_other_records_with_history(write_jsonl) -> None:
    assert openhands.claims(Source(SAMPLE))
    chat_history = write_jsonl([{"instance_id": "a", "history": [{"role": "user"}]}], "c.jsonl")
    no_instance = write_jsonl([{"history": [{"action": "run"}]}], "n.jsonl")
    assert not openhands.claims(Source(chat_history))
    assert not openhands.claims(Source(no_instance))


# -- ingest of the sample --------------------------------------------------------------------


def test_sample_ingests_calls_statuses_and_tools(store) -> None:
    report = store.ingest([SAMPLE])
    assert (report.added, report.quarantined, report.files[0].format) == (2, 0, "openhands")
    rows = store.sql(
        "SELECT e.case_id, t.call_index, t.tool_name, t.args->>'command', t.status, t.error"
        " FROM tool_calls t JOIN episodes e USING (episode_id) ORDER BY e.case_id, t.call_index"
    ).rows()
    assert rows == [
        ("acme__billing-41", 0, "execute_bash", "grep -rn VAT_RATE /workspace/acme__billing",
         "ok", None),
        ("acme__billing-41", 1, "str_replace_editor", "str_replace", "ok", None),
        ("acme__billing-41", 2, "execute_bash",
         "cd /workspace/acme__billing && python -m pytest -q tests/test_vat.py", "error",
         "Command `cd /workspace/acme__billing && python -m pytest -q tests/test_vat.py` "
         "executed with exit code 1."),
        ("acme__billing-41", 3, "finish", None, "missing", None),
        ("acme__billing-44", 0, "str_replace_editor", "str_replace", "error",
         "No replacement was performed, old_str `rows[:-1]` did not appear verbatim in "
         "/workspace/acme__billing/export.py."),
        ("acme__billing-44", 1, "execute_bash", "cat /workspace/acme__billing/.env", "ok", None),
    ]
    episodes = store.sql(
        "SELECT case_id, agent, agent_version, model, termination, tools_declared"
        " FROM episodes ORDER BY case_id").rows()
    assert episodes == [
        ("acme__billing-41", "CodeActAgent", "0.39.0", "anthropic/claude-3-7-sonnet",
         "completed", True),
        ("acme__billing-44", "CodeActAgent", "0.39.0", "anthropic/claude-3-7-sonnet",
         "error", True),
    ]
    assert store.sql("SELECT name FROM tool_definitions WHERE episode_id ="
                     " (SELECT min(episode_id) FROM episodes) ORDER BY position").rows() == [
        ("execute_bash",), ("str_replace_editor",), ("finish",)]


def test_sample_secrets_are_in_the_transcript(store) -> None:
    store.ingest([SAMPLE])
    rows = store.sql(
        "SELECT DISTINCT e.case_id, x.origin FROM transcript x JOIN episodes e USING (episode_id)"
        " WHERE x.text LIKE '%pat_9Xk2LmQ7%' OR x.text LIKE '%s3sk-Q1w2E3r4%'"
        " ORDER BY 1, 2").rows()
    assert rows == [("acme__billing-41", "step.text"), ("acme__billing-44", "step.text")]
