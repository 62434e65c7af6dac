"""SWE-agent .traj files: trajectory and history mapping; ingest of the hand-written samples."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tracelab.formats import swe_agent
from tracelab.formats.base import Quarantined
from tracelab.formats.source import Source

SAMPLES = Path(__file__).resolve().parents[2] / "sample_traces" / "swe-agent"
TRAJECTORY_SAMPLE = SAMPLES / "acme__billing-212.traj"
HISTORY_SAMPLE = SAMPLES / "function_calling" / "acme__billing-215.traj"


def write_traj(tmp_path: Path, document, name: str = "repo__proj-7.traj") -> Source:
    path = tmp_path / name
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    return Source(path)


def one(source: Source) -> dict:
    [(line, episode)] = list(swe_agent.episodes(source))
    assert line == 1
    return episode


# -- mapping ---------------------------------------------------------------------------------


def test_trajectory_entries_become_thought_call_and_observation(tmp_path: Path) -> None:
    source = write_traj(tmp_path, {
        "trajectory": [
            {"action": "find_file setup.py\n", "observation": "Found 1 matches", "thought": "Look.\n",
             "response": "Look.\n```\nfind_file setup.py\n```", "state": "{}", "execution_time": 0.25,
             "messages": [{"role": "user", "content": "the whole context"}]},
            {"action": "submit", "observation": "diff", "thought": "", "response": "```\nsubmit\n```"}],
        "history": [
            {"role": "system", "content": "SETTING", "agent": "primary"},
            {"role": "user", "content": "ISSUE: x", "agent": "primary"},
            {"role": "assistant", "content": "not read", "thought": "not read", "action": "ls"},
            {"role": "user", "content": "not read either"}],
        "info": {"exit_status": "submitted", "model_stats": {"instance_cost": 0.5}},
        "environment": "swe_main"})
    episode = one(source)
    assert episode == {
        "episode_id": f"{source.content_hash[:16]}:1",
        "case_id": "repo__proj-7",
        "termination": "submitted",
        "meta": {"info": {"exit_status": "submitted", "model_stats": {"instance_cost": 0.5}},
                 "environment": "swe_main"},
        "input": "ISSUE: x",
        "steps": [
            {"kind": "system", "text": "SETTING", "meta": {"agent": "primary"}},
            {"kind": "user", "text": "ISSUE: x", "meta": {"agent": "primary"}},
            {"kind": "assistant", "text": "Look.\n"},
            {"kind": "tool_call", "name": "find_file", "args": {"action": "find_file setup.py\n"}},
            {"kind": "tool_result", "name": "find_file", "text": "Found 1 matches", "status": "ok",
             "duration_ms": 250.0, "meta": {"state": "{}"}},
            {"kind": "tool_call", "name": "submit", "args": {"action": "submit"}},
            {"kind": "tool_result", "name": "submit", "text": "diff", "status": "ok"},
        ],
    }


def test_a_rejected_edit_is_an_error_with_the_linter_message(tmp_path: Path) -> None:
    observation = ("Your proposed edit has introduced new syntax error(s). Please read this error "
                   "message carefully and then retry editing the file.\n\nERRORS:\n- E999 x")
    episode = one(write_traj(tmp_path, {"trajectory": [
        {"action": "edit 1:1\nx\nend_of_edit", "observation": observation, "thought": ""},
        {"action": "python broken.py", "observation": "Traceback (most recent call last):",
         "thought": ""}]}))
    results = [s for s in episode["steps"] if s["kind"] == "tool_result"]
    assert [(r["status"], r.get("error")) for r in results] == [
        ("error", "Your proposed edit has introduced new syntax error(s). Please read this error "
                  "message carefully and then retry editing the file."),
        ("ok", None),
    ]


def test_demonstrations_are_system_steps_so_the_input_is_the_issue(tmp_path: Path) -> None:
    episode = one(write_traj(tmp_path, {"history": [
        {"role": "system", "content": "SETTING"},
        {"role": "user", "content": "DEMONSTRATION", "is_demo": True},
        {"role": "user", "content": "ISSUE: y"}]}))
    assert episode["steps"][1] == {"kind": "system", "text": "DEMONSTRATION",
                                   "meta": {"is_demo": True}}
    assert episode["input"] == "ISSUE: y"


def test_history_alone_gives_calls_with_tool_call_ids(tmp_path: Path) -> None:
    episode = one(write_traj(tmp_path, {"history": [
        {"role": "user", "content": [{"type": "text", "text": "ISSUE: z"}]},
        {"role": "assistant", "content": "Listing.", "thought": "Listing.", "action": "ls -a",
         "tool_calls": [{"function": {"name": "bash", "arguments": "{\"command\":\"ls -a\"}"},
                         "id": "call_9", "type": "function"}]},
        {"role": "tool", "content": "setup.py", "tool_call_ids": ["call_9"]},
        {"role": "assistant", "content": "```\ncreate a.py\n```", "thought": "",
         "action": "create a.py"},
        {"role": "user", "content": "[File: a.py (1 lines total)]"},
        {"role": "assistant", "content": "All done, no command."}]}))
    assert episode["steps"] == [
        {"kind": "user", "text": "ISSUE: z"},
        {"kind": "assistant", "text": "Listing."},
        {"kind": "tool_call", "name": "ls", "call_id": "call_9", "args": {"action": "ls -a"}},
        {"kind": "tool_result", "call_id": "call_9", "name": "ls", "text": "setup.py",
         "status": "ok"},
        {"kind": "tool_call", "name": "create", "args": {"action": "create a.py"}},
        {"kind": "tool_result", "name": "create", "text": "[File: a.py (1 lines total)]",
         "status": "ok"},
        {"kind": "assistant", "text": "All done, no command."},
    ]
    assert episode["output"] == "All done, no command."


def test_a_tool_message_after_another_result_is_still_a_result(tmp_path: Path) -> None:
    episode = one(write_traj(tmp_path, {"history": [
        {"role": "assistant", "content": "", "action": "ls",
         "tool_calls": [{"function": {"name": "bash", "arguments": "{}"}, "id": "c1"}]},
        {"role": "tool", "content": "a.py", "tool_call_ids": ["c1"]},
        {"role": "tool", "content": "late output", "tool_call_ids": ["c2"]},
        {"role": "user", "content": "Please go on."}]}))
    assert episode["steps"][1:] == [
        {"kind": "tool_result", "call_id": "c1", "name": "ls", "text": "a.py", "status": "ok"},
        {"kind": "tool_result", "call_id": "c2", "text": "late output", "status": "ok"},
        {"kind": "user", "text": "Please go on."},
    ]


def test_model_and_case_id_come_from_replay_config_even_as_a_json_string(tmp_path: Path) -> None:
    config = {"agent": {"model": {"name": "gpt-4o"}}, "problem_statement": {"id": "org__repo-i3"}}
    for replay_config in (config, json.dumps(config)):
        episode = one(write_traj(tmp_path, {"trajectory": [], "history": [],
                                            "replay_config": replay_config}))
        assert (episode["model"], episode["case_id"]) == ("gpt-4o", "org__repo-i3")


@pytest.mark.parametrize(("document", "reason"), [
    ([1, 2], "the .traj file is a list, not an object"),
    ({"info": {}}, "not a SWE-agent trajectory: no `trajectory` or `history`"),
    ({"trajectory": [{"action": 3, "observation": ""}]}, "trajectory[0].action must be a string"),
    ({"history": [{"role": "critic", "content": "?"}]}, "history[0]: unexpected role 'critic'"),
])
def test_malformed_files_are_one_quarantined_record(tmp_path: Path, document, reason) -> None:
    [item] = list(swe_agent.episodes(write_traj(tmp_path, document)))
    assert isinstance(item, Quarantined)
    assert (item.line, item.reason) == (1, reason)


def test_a_file_that_is_not_json_is_quarantined(tmp_path: Path) -> None:
    path = tmp_path / "x.traj"
    path.write_text("{\"trajectory\": [", encoding="utf-8")
    [item] = list(swe_agent.episodes(Source(path)))
    assert isinstance(item, Quarantined) and item.reason.startswith("invalid JSON")


def test_command_name_is_the_first_word() -> None:
    assert swe_agent.command_name("edit 3:4\nreturn x\nend_of_edit\n") == "edit"
    assert swe_agent.command_name("  python3 -m pytest") == "python3"
    assert swe_agent.command_name(" \n") is None


# -- detection -------------------------------------------------------------------------------


def test_claims_traj_files_only(tmp_path: Path) -> None:
    assert swe_agent.claims(Source(TRAJECTORY_SAMPLE))
    same_content = tmp_path / "trajectory.json"
    same_content.write_bytes(TRAJECTORY_SAMPLE.read_bytes())
    assert not swe_agent.claims(Source(same_content))


# -- ingest of the samples -------------------------------------------------------------------


def test_samples_ingest_with_calls_errors_and_termination(store) -> None:
    report = store.ingest([SAMPLES])
    assert [(f.format, f.added, f.quarantined) for f in report.files] == [
        ("swe-agent", 1, 0), ("swe-agent", 1, 0)]
    rows = store.sql(
        "SELECT e.case_id, t.call_index, t.tool_name, t.status, t.call_id, t.duration_ms"
        " FROM tool_calls t JOIN episodes e USING (episode_id) ORDER BY e.case_id, t.call_index"
    ).rows()
    assert rows == [
        ("acme__billing-212", 0, "open", "ok", None, 120.0),
        ("acme__billing-212", 1, "edit", "error", None, 310.0),
        ("acme__billing-212", 2, "edit", "ok", None, 290.0),
        ("acme__billing-212", 3, "submit", "ok", None, 520.0),
        ("acme__billing-215", 0, "cat", "ok", "call_env01", None),
        ("acme__billing-215", 1, "edit", "ok", "call_ed01", None),
        ("acme__billing-215", 2, "open", "ok", "call_op01", None),
        ("acme__billing-215", 3, "edit", "error", "call_ed02", None),
        ("acme__billing-215", 4, "echo", "ok", "call_wr01", None),
    ]
    episodes = store.sql(
        "SELECT case_id, termination, tools_declared, meta->>'$.info.model_stats.api_calls'"
        " FROM episodes ORDER BY case_id").rows()
    assert episodes == [("acme__billing-212", "submitted", False, "4"),
                        ("acme__billing-215", None, False, None)]


def test_samples_secrets_are_in_the_transcript(store) -> None:
    store.ingest([SAMPLES])
    rows = store.sql(
        "SELECT DISTINCT e.case_id, x.origin FROM transcript x JOIN episodes e USING (episode_id)"
        " WHERE x.text LIKE '%sk_live_51Hq9ACMEz7%' OR x.text LIKE '%mailer-Pa55-9931%'"
        " ORDER BY 1, 2").rows()
    assert rows == [("acme__billing-212", "step.text"), ("acme__billing-215", "step.text")]
