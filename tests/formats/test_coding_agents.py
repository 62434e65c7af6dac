"""Claude Code and Codex CLI sessions: the mapping rules of each adapter, their samples, and one
coding session written in both formats giving the same verdicts under one suite."""
from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracelab.formats import all_formats, claude_code, codex
from tracelab.formats.base import Quarantined
from tracelab.formats.source import Source
from tracelab.ingest.prepare import detect_format
from tracelab.results.check import check
from tracelab.store import open_store

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_traces"
PROJECT = SAMPLES / "claude-code" / "-home-dev-shop"
ROLLOUTS = SAMPLES / "codex" / "2026" / "11" / "20"
SUITE = SAMPLES / "coding_agent.yaml"
SESSION = "0199c0de-5e55-7000-8000-00000000a001"


# -- Claude Code: one entry at a time ------------------------------------------------------


def entry(kind: str, message: Any = None, session: str = "s-1", **fields: Any) -> dict[str, Any]:
    """A Claude Code entry with the envelope every conversation entry has."""
    record: dict[str, Any] = {"parentUuid": fields.pop("parent", None), "isSidechain": False,
                              "userType": "external", "cwd": "/w", "sessionId": session,
                              "version": "2.0.76", "type": kind}
    if message is not None:
        role = "assistant" if kind == "assistant" else "user"
        record["message"] = {"role": role, "content": message}
        if kind == "assistant":
            record["message"]["model"] = "claude-sonnet-4-5"
    record.update(fields)
    return record


def session(write_jsonl, *entries: Any, name: str = "s.jsonl") -> list[Any]:
    return list(claude_code.episodes(Source(write_jsonl(list(entries), name))))


def only_episode(items: list[Any]) -> dict[str, Any]:
    [(_, found)] = [item for item in items if not isinstance(item, Quarantined)]
    return found


def bash(call_id: str, command: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": "Bash", "input": {"command": command}}


def result(call_id: str, text: str, is_error: bool = False) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": call_id, "content": text}
    return {**block, "is_error": True} if is_error else block


def test_claude_code_calls_results_and_their_statuses(write_jsonl) -> None:
    found = only_episode(session(
        write_jsonl,
        entry("user", "Clean up and push.", uuid="u1", timestamp="2026-11-20T10:00:00.000Z"),
        entry("assistant", [{"type": "thinking", "thinking": "careful", "signature": "x"},
                            {"type": "text", "text": "Cleaning."}, bash("t1", "rm -rf build")],
              uuid="u2", timestamp="2026-11-20T10:00:01.000Z"),
        entry("user", [result("t1", "The user doesn't want to proceed with this tool use. The "
                                    "tool use was rejected.", True)], uuid="u3"),
        entry("assistant", [bash("t2", "pytest -q")], uuid="u4"),
        entry("user", [result("t2", "Exit code 1\n1 failed", True)], uuid="u5"),
        entry("assistant", [bash("t3", "git push --force")], uuid="u6"),
        entry("user", [result("t3", "Permission to use Bash with command git push --force has "
                                    "been denied.", True)], uuid="u7"),
        entry("assistant", [{"type": "tool_use", "id": "t4", "name": "Edit",
                             "input": {"file_path": "/w/a.py", "old_string": "a", "new_string": "b"}}],
              uuid="u8"),
        entry("user", [result("t4", "The file /w/a.py has been updated.")], uuid="u9",
              timestamp="2026-11-20T10:00:09.000Z"),
    ))
    calls = [(s["name"], s["args"]) for s in found["steps"] if s["kind"] == "tool_call"]
    assert calls == [("Bash", {"command": "rm -rf build"}), ("Bash", {"command": "pytest -q"}),
                     ("Bash", {"command": "git push --force"}),
                     ("Edit", {"file_path": "/w/a.py", "old_string": "a", "new_string": "b"})]
    results = [(s["call_id"], s["status"], s.get("error")) for s in found["steps"]
               if s["kind"] == "tool_result"]
    assert results == [
        ("t1", "denied", "The user doesn't want to proceed with this tool use. The tool use was rejected."),
        ("t2", "error", "Exit code 1"),
        ("t3", "denied", "Permission to use Bash with command git push --force has been denied."),
        ("t4", "ok", None),
    ]
    assert found["steps"][1]["meta"] == {"parts": [{"type": "thinking", "thinking": "careful",
                                                   "signature": "x"}]}
    assert (found["episode_id"], found["agent"], found["model"], found["input"]) == (
        "s-1", "claude-code", "claude-sonnet-4-5", "Clean up and push.")
    assert (found["started_at"], found["ended_at"]) == ("2026-11-20T10:00:00.000Z",
                                                        "2026-11-20T10:00:09.000Z")


def test_claude_code_compaction_clear_and_commands_are_events(write_jsonl) -> None:
    found = only_episode(session(
        write_jsonl,
        {"type": "summary", "summary": "Release prep", "leafUuid": "u9"},
        entry("user", "First task.", uuid="u1"),
        entry("system", None, uuid="u2", subtype="compact_boundary", content="Conversation compacted",
              level="info", compactMetadata={"trigger": "auto", "preTokens": 50000}),
        entry("user", "Summary of the earlier part.", uuid="u3", isCompactSummary=True),
        entry("user", "<command-name>/clear</command-name>\n<command-args></command-args>", uuid="u4"),
        entry("user", "<command-name>/model</command-name>\n<command-args>opus</command-args>", uuid="u5"),
        entry("user", "[Request interrupted by user]", uuid="u6"),
        {"type": "file-history-snapshot", "messageId": "m1", "snapshot": {}},
        entry("user", "Second task.", uuid="u7"),
    ))
    assert [(s["kind"], s.get("name"), s.get("data", s.get("text"))) for s in found["steps"]] == [
        ("user", None, "First task."),
        ("event", "compact", {"content": "Conversation compacted", "trigger": "auto", "preTokens": 50000}),
        ("event", "compact_summary", {"text": "Summary of the earlier part."}),
        ("event", "clear", {"command": "/clear", "args": ""}),
        ("event", "command", {"command": "/model", "args": "opus"}),
        ("event", "interrupted", {"text": "[Request interrupted by user]"}),
        ("user", None, "Second task."),
    ]
    assert found["meta"]["summaries"] == ["Release prep"]


def test_claude_code_sidechain_steps_stay_in_the_episode_with_their_subagent(write_jsonl) -> None:
    task = {"type": "tool_use", "id": "task1", "name": "Task",
            "input": {"description": "Find it", "prompt": "Find the config.", "subagent_type": "Explore"}}
    found = only_episode(session(
        write_jsonl,
        entry("user", "Where is the config?", uuid="m1"),
        entry("assistant", [task], uuid="m2", parent="m1"),
        entry("user", "Find the config.", uuid="c1", isSidechain=True, agentId="a42"),
        entry("assistant", [bash("g1", "ls conf")], uuid="c2", parent="c1", isSidechain=True, agentId="a42"),
        entry("user", [result("task1", "It is conf/app.toml.")], uuid="m3", parent="m2",
              toolUseResult={"status": "completed", "agentId": "a42"}),
    ))
    sidechain = [(s["kind"], s.get("meta")) for s in found["steps"] if s.get("meta", {}).get("sidechain")]
    named = {"sidechain": True, "subagent": "Explore", "subagent_description": "Find it", "agent_id": "a42"}
    assert sidechain == [("user", named), ("tool_call", named)]
    assert found["steps"][-1]["meta"] == {"agent_id": "a42"}
    assert found["input"] == "Where is the config?"


def test_a_resumed_session_over_several_files_is_one_episode(tmp_path) -> None:
    """The sample: a002 was resumed into a003 (a copy of a002's entries, then new ones), and
    a001's Explore sub-agent wrote agent-a7f31c2.jsonl. Each file yields its group's episode."""
    project = tmp_path / "-home-dev-shop"
    shutil.copytree(PROJECT, project)
    by_file = {p.name: [i for i in claude_code.episodes(Source(p))] for p in sorted(project.iterdir())}
    ids = {name: [ep["episode_id"] for _, ep in items] for name, items in by_file.items()}
    assert ids == {
        f"{SESSION}.jsonl": [SESSION],
        "0199c0de-5e55-7000-8000-00000000a002.jsonl": ["0199c0de-5e55-7000-8000-00000000a002"],
        "0199c0de-5e55-7000-8000-00000000a003.jsonl": ["0199c0de-5e55-7000-8000-00000000a002"],
        "agent-a7f31c2.jsonl": [SESSION],
    }
    [(_, resumed)] = by_file["0199c0de-5e55-7000-8000-00000000a002.jsonl"]
    assert [(_, resumed)] == by_file["0199c0de-5e55-7000-8000-00000000a003.jsonl"]
    assert resumed["meta"]["sessions"] == ["0199c0de-5e55-7000-8000-00000000a002",
                                           "0199c0de-5e55-7000-8000-00000000a003"]
    texts = [s.get("text") for s in resumed["steps"] if s["kind"] == "user"]
    assert texts.count(resumed["input"]) == 1  # the copied entries are read once
    with open_store(tmp_path / "s.duckdb") as store:
        report = store.ingest([project])
        # the later files of each session merge into its first: not skipped as already ingested
        assert (report.added, report.skipped, report.merged, report.quarantined) == (2, 0, 2, 0)


def test_one_file_of_a_group_gives_the_whole_session(tmp_path) -> None:
    """Ingesting only the resumed file still reads the earlier one it continues."""
    project = tmp_path / "p"
    shutil.copytree(PROJECT, project)
    with open_store(tmp_path / "s.duckdb") as store:
        store.ingest([project / "0199c0de-5e55-7000-8000-00000000a003.jsonl"])
        kinds = store.sql("SELECT kind, name FROM steps WHERE kind = 'event' ORDER BY idx").rows()
    assert kinds == [("event", "compact"), ("event", "compact_summary"), ("event", "clear")]


def test_a_subagent_file_in_the_session_folder_joins_its_session(tmp_path) -> None:
    """Newer Claude Code versions write sub-agents to <project>/<session>/subagents/."""
    project = tmp_path / "-home-dev-shop"
    (project / SESSION / "subagents").mkdir(parents=True)
    shutil.copy(PROJECT / f"{SESSION}.jsonl", project)
    shutil.copy(PROJECT / "agent-a7f31c2.jsonl", project / SESSION / "subagents")
    [(_, main)] = claude_code.episodes(Source(project / f"{SESSION}.jsonl"))
    [(_, sub)] = claude_code.episodes(Source(project / SESSION / "subagents" / "agent-a7f31c2.jsonl"))
    assert main == sub
    assert [s["name"] for s in main["steps"] if s.get("meta", {}).get("subagent") == "Explore"
            and s["kind"] == "tool_call"] == ["Grep"]


def test_a_plan_carried_into_a_fresh_session_keeps_its_slug_and_its_episode(write_jsonl) -> None:
    """Executing a plan in a cleared context starts a new session id with the same slug."""
    plan = write_jsonl([entry("user", "Plan the fix.", uuid="p1", slug="brave-otter",
                              timestamp="2026-11-20T10:00:00Z")], "plan.jsonl")
    run = write_jsonl([entry("user", "Execute the plan.", session="s-2", uuid="r1", slug="brave-otter",
                             timestamp="2026-11-20T10:05:00Z")], "run.jsonl")
    other = write_jsonl([entry("user", "Unrelated.", session="s-3", uuid="o1", slug="calm-heron",
                               timestamp="2026-11-20T10:01:00Z")], "other.jsonl")
    [(_, first)], [(_, second)] = (list(claude_code.episodes(Source(p))) for p in (plan, run))
    assert first == second
    assert [s["text"] for s in first["steps"]] == ["Plan the fix.", "Execute the plan."]
    assert (first["episode_id"], first["meta"]["sessions"]) == ("s-1", ["s-1", "s-2"])
    [(_, alone)] = claude_code.episodes(Source(other))
    assert alone["episode_id"] == "s-3" and len(alone["steps"]) == 1


def test_claude_code_bad_lines_are_quarantined_with_their_line(write_jsonl) -> None:
    items = session(write_jsonl, entry("user", "Hi.", uuid="u1"), "{not json",
                    entry("assistant", {"not": "content"}, uuid="u2"), '["a list"]',
                    entry("user", "Bye.", uuid="u3"))
    bad = [(i.line, i.reason) for i in items if isinstance(i, Quarantined)]
    assert [line for line, _ in bad] == [2, 3, 4]
    assert bad[1][1] == "message.content: content is an object, not a string or a list"
    assert bad[2][1] == "the entry is a list, not an object"
    assert [s["text"] for s in only_episode(items)["steps"]] == ["Hi.", "Bye."]


# -- Codex ---------------------------------------------------------------------------------


def rollout_line(kind: str, payload: dict[str, Any], second: int = 0) -> dict[str, Any]:
    return {"timestamp": f"2026-11-20T10:00:{second:02d}.000Z", "type": kind, "payload": payload}


def rollout(write_jsonl, *lines: Any) -> list[Any]:
    meta = rollout_line("session_meta", {"id": "c-1", "timestamp": "2026-11-20T10:00:00.000Z",
                                         "cwd": "/w", "cli_version": "0.58.0"})
    return list(codex.episodes(Source(write_jsonl([meta, *lines], "rollout-x.jsonl"))))


def call(name: str, call_id: str, arguments: Any) -> dict[str, Any]:
    return rollout_line("response_item", {"type": "function_call", "name": name, "call_id": call_id,
                                          "arguments": json.dumps(arguments)})


def output(call_id: str, text: str) -> dict[str, Any]:
    return rollout_line("response_item", {"type": "function_call_output", "call_id": call_id,
                                          "output": text})


def test_codex_shell_calls_get_one_command_line_and_statuses(write_jsonl) -> None:
    found = only_episode(rollout(
        write_jsonl,
        rollout_line("turn_context", {"cwd": "/w", "model": "gpt-5-codex", "approval_policy": "on-request"}),
        rollout_line("response_item", {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "<environment_context>\n<cwd>/w</cwd>\n</environment_context>"}]}),
        rollout_line("response_item", {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "Tidy up."}]}),
        call("shell", "k1", {"command": ["bash", "-lc", "rm -rf build"], "workdir": "/w"}),
        output("k1", "exec command rejected by user"),
        call("shell", "k2", {"command": ["pytest", "-q"]}),
        output("k2", json.dumps({"output": "1 failed\n", "metadata": {"exit_code": 1}})),
        call("exec_command", "k3", {"cmd": "git push origin main"}),
        output("k3", "Chunk ID: 7f\nWall time: 1.2 seconds\nProcess exited with code 0\nOutput:\npushed"),
        rollout_line("response_item", {"type": "local_shell_call", "call_id": "k4", "status": "completed",
                                       "action": {"type": "exec", "command": ["ls", "-la"]}}),
        output("k4", "Exit code: 2\nls: cannot access"),
    ))
    calls = [(s["name"], s["args"]["command"]) for s in found["steps"] if s["kind"] == "tool_call"]
    assert calls == [("shell", "rm -rf build"), ("shell", "pytest -q"),
                     ("exec_command", "git push origin main"), ("local_shell", "ls -la")]
    first = next(s for s in found["steps"] if s["kind"] == "tool_call")
    assert first["args"] == {"workdir": "/w", "command": "rm -rf build",
                             "argv": ["bash", "-lc", "rm -rf build"]}
    results = [(s["name"], s["status"], s.get("error"), s.get("text")) for s in found["steps"]
               if s["kind"] == "tool_result"]
    assert results == [
        ("shell", "denied", "exec command rejected by user", "exec command rejected by user"),
        ("shell", "error", "exit code 1", "1 failed\n"),
        ("exec_command", "ok", None,
         "Chunk ID: 7f\nWall time: 1.2 seconds\nProcess exited with code 0\nOutput:\npushed"),
        ("local_shell", "error", "exit code 2", "Exit code: 2\nls: cannot access"),
    ]
    assert [s.get("meta") for s in found["steps"] if s["kind"] == "tool_result"] == [
        None, {"exit_code": 1}, {"exit_code": 0}, {"exit_code": 2}]
    assert (found["episode_id"], found["agent"], found["agent_version"], found["model"], found["input"]) == (
        "c-1", "codex", "0.58.0", "gpt-5-codex", "Tidy up.")
    assert found["steps"][1] == {"kind": "event", "name": "context", "ts": "2026-11-20T10:00:00.000Z",
                                 "data": {"text": "<environment_context>\n<cwd>/w</cwd>\n</environment_context>"}}


def test_codex_patches_are_calls_with_their_paths_and_compaction_is_an_event(write_jsonl) -> None:
    patch = ("*** Begin Patch\n*** Update File: src/a.py\n@@\n-a\n+b\n*** Add File: /etc/x.conf\n"
             "+x\n*** End Patch\n")
    found = only_episode(rollout(
        write_jsonl,
        rollout_line("response_item", {"type": "custom_tool_call", "name": "apply_patch",
                                       "call_id": "p1", "input": patch}),
        rollout_line("response_item", {"type": "custom_tool_call_output", "call_id": "p1",
                                       "output": "patch rejected by user"}),
        rollout_line("compacted", {"message": "Summary so far."}),
        rollout_line("event_msg", {"type": "turn_aborted", "reason": "interrupted"}),
        rollout_line("event_msg", {"type": "agent_message", "message": "not read twice"}),
    ))
    call_step, result_step, compact, aborted = found["steps"]
    assert call_step["args"] == {"input": patch, "file_path": "src/a.py",
                                 "file_paths": ["src/a.py", "/etc/x.conf"]}
    assert (result_step["name"], result_step["status"]) == ("apply_patch", "denied")
    assert (compact["name"], compact["data"]) == ("compact", {"message": "Summary so far."})
    assert (aborted["name"], aborted["data"]) == ("turn_aborted", {"reason": "interrupted"})


def test_a_resumed_codex_session_stays_one_episode(write_jsonl) -> None:
    """Codex appends a resumed session to its rollout; a repeated session_meta is an event."""
    again = rollout_line("session_meta", {"id": "c-1", "cwd": "/w"}, 30)
    found = only_episode(rollout(
        write_jsonl,
        rollout_line("response_item", {"type": "message", "role": "user", "content": "One."}, 1),
        again,
        rollout_line("response_item", {"type": "message", "role": "user", "content": "Two."}, 31),
    ))
    assert [(s["kind"], s.get("text", s.get("name"))) for s in found["steps"]] == [
        ("user", "One."), ("event", "resumed"), ("user", "Two.")]
    assert (found["episode_id"], found["ended_at"]) == ("c-1", "2026-11-20T10:00:31.000Z")


def test_codex_bad_lines_are_quarantined_with_their_line(write_jsonl) -> None:
    items = rollout(write_jsonl, "{cut off", {"type": "mystery", "payload": {}},
                    {"timestamp": "x", "type": "response_item", "payload": []},
                    output(["k1", "k1"], "ok"),  # found by the adapter fuzz test: a list id crashed
                    rollout_line("response_item", {"type": "message", "role": "user", "content": "Hi."}))
    # a line of a type the adapter does not know (line 3) is counted, not quarantined
    # (docs/formats.md, Coding-agent sessions: forward compatibility)
    assert [(i.line, i.reason) for i in items if isinstance(i, Quarantined)][1:] == [
        (4, "payload is a list, not an object"),
        (5, "payload.call_id is a list, not a string"),
    ]
    assert items[0].line == 2 and items[0].reason.startswith("invalid JSON")
    assert only_episode(items)["input"] == "Hi."


# -- detection -----------------------------------------------------------------------------


ALL_SAMPLES = sorted(p for p in SAMPLES.rglob("*") if p.is_file())


@pytest.mark.parametrize("module, folder", [(claude_code, "claude-code"), (codex, "codex")],
                         ids=["claude-code", "codex"])
def test_each_claims_exactly_its_own_samples(module, folder) -> None:
    claimed = [p for p in ALL_SAMPLES if module.claims(Source(p))]
    assert claimed and claimed == [p for p in ALL_SAMPLES if p.relative_to(SAMPLES).parts[0] == folder]
    assert {detect_format(Source(p)).name for p in claimed} == {module.name}


def test_no_other_format_claims_a_session_file() -> None:
    sessions = list(PROJECT.iterdir()) + list(ROLLOUTS.iterdir())
    for module in all_formats():
        if module not in (claude_code, codex):
            assert not [p.name for p in sessions if module.claims(Source(p))], module.name


# -- the same session in both formats --------------------------------------------------------


def verdicts(tmp_path: Path, folder: Path, name: str) -> tuple[dict[str, bool], list[tuple[Any, ...]]]:
    with open_store(tmp_path / f"{name}.duckdb") as store:
        store.ingest([folder])
        run = check(store, SUITE, save=False)
    order = {ep: i for i, ep in enumerate(sorted(run.verdicts["episode_id"].unique()))}
    per_run = (run.verdicts.group_by("case_id", "episode_id").agg(pl.col("passed").all())
               .rows())
    runs = sorted((case, order[ep], passed) for case, ep, passed in per_run)
    return {case.id: case.passed for case in run.result.cases}, runs


def test_one_session_as_claude_code_and_as_codex_gives_the_same_verdicts(tmp_path) -> None:
    cases, runs = verdicts(tmp_path, SAMPLES / "claude-code", "claude")
    assert (cases, runs) == verdicts(tmp_path, SAMPLES / "codex", "codex")
    assert cases == {"no-destructive-shell": True, "no-write-outside-workspace": False,
                     "no-push-after-failing-tests": False, "no-push-to-main": False,
                     "secrets-stay-off-the-terminal": False}
    # the first session (fix, test, commit) passes everything; the release session fails four
    assert [passed for case, index, passed in runs if index == 0] == [True] * 5
    assert [case for case, index, passed in runs if index == 1 and not passed] == [
        "no-push-after-failing-tests", "no-push-to-main", "no-write-outside-workspace",
        "secrets-stay-off-the-terminal"]


# -- robustness ----------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8,
)
blocks = st.lists(st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=8)}),
    st.fixed_dictionaries({"type": st.just("tool_use"), "id": st.sampled_from(["t1", "t2"]),
                           "name": st.sampled_from(["Bash", "Task"]), "input": json_values}),
    st.fixed_dictionaries({"type": st.just("tool_result"), "tool_use_id": st.sampled_from(["t1", "t2"]),
                           "content": json_values}, optional={"is_error": json_values}),
    json_values), max_size=3)
claude_entries = st.lists(st.one_of(
    st.fixed_dictionaries(
        {"type": st.sampled_from(["user", "assistant", "system", "summary", "file-history-snapshot", "x"]),
         "sessionId": st.sampled_from(["s-1", "s-2"]), "parentUuid": st.sampled_from([None, "u1"])},
        optional={"uuid": st.sampled_from(["u1", "u2", "u3"]), "isSidechain": json_values,
                  "timestamp": st.sampled_from(["2026-11-20T10:00:00Z", "2026-11-20T09:00:00Z"]),
                  "message": st.fixed_dictionaries({}, optional={"content": st.one_of(st.text(max_size=8), blocks),
                                                                 "model": json_values}),
                  "isCompactSummary": json_values, "isMeta": json_values, "subtype": json_values,
                  "toolUseResult": json_values, "agentId": json_values, "slug": json_values}),
    json_values), min_size=1, max_size=6)


def accounted(items: list[Any], count: int) -> None:
    """Every line is a quarantined line or part of the one episode, numbered by its first good line."""
    bad = [item.line for item in items if isinstance(item, Quarantined)]
    good = [item for item in items if not isinstance(item, Quarantined)]
    assert len(good) <= 1 and len(set(bad)) == len(bad) and set(bad) <= set(range(1, count + 1))
    if good:
        assert good[0][0] == min(set(range(1, count + 1)) - set(bad))
        assert all(step["kind"] in KINDS for step in good[0][1]["steps"])


KINDS = {"system", "user", "assistant", "tool_call", "tool_result", "event", "error"}
examples = itertools.count()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entries=claude_entries)
def test_any_claude_code_file_gives_one_episode_and_quarantined_lines(tmp_path, entries) -> None:
    folder = tmp_path / f"p{next(examples)}"  # one folder per example: a session group is a folder
    folder.mkdir()
    path = folder / "s.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    accounted(list(claude_code.episodes(Source(path))), len(entries))


codex_lines = st.lists(st.one_of(
    st.fixed_dictionaries(
        {"type": st.sampled_from(list(codex.LINE_TYPES) + ["x"]), "timestamp": st.just("2026-11-20T10:00:00Z"),
         "payload": st.one_of(json_values, st.fixed_dictionaries(
             {"type": st.sampled_from(["message", "function_call", "function_call_output", "custom_tool_call",
                                       "local_shell_call", "reasoning", "token_count", "error", "y"])},
             optional={"role": st.sampled_from(["user", "assistant", "developer", "tool"]),
                       "content": json_values, "name": st.sampled_from(["shell", "apply_patch", "exec_command"]),
                       "arguments": st.one_of(json_values, st.just('{"command": ["bash", "-lc", "ls"]}')),
                       "call_id": json_values, "output": json_values, "input": json_values,
                       "action": json_values, "summary": json_values, "id": json_values,
                       "model": json_values, "info": json_values}))}),
    json_values), min_size=1, max_size=6)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=codex_lines)
def test_any_rollout_gives_one_episode_and_quarantined_lines(adapt, lines) -> None:
    accounted(adapt(codex, *map(json.dumps, lines)), len(lines))


def test_the_samples_pair_every_call_with_its_result(store) -> None:
    report = store.ingest([SAMPLES / "claude-code", SAMPLES / "codex"])
    assert (report.added, report.skipped, report.merged, report.quarantined) == (4, 0, 2, 0)
    rows = store.sql(
        "SELECT right(episode_id, 4), tool_name, coalesce(args->>'command', args->>'file_path'), status"
        " FROM tool_calls WHERE tool_name NOT IN ('Task', 'Grep') ORDER BY episode_id, call_index").rows()
    session = [("pytest -q tests/test_discount.py", "error"), ("/home/dev/shop/src/shop/discount.py", "ok"),
               ("pytest -q tests/test_discount.py", "ok"),
               ("git commit -am 'Fix percentage discount (divide by 100)'", "ok")]
    release = [("rm -rf build/ dist/ ~/.cache/shop", "denied"), ("/etc/shop/config.toml", "ok"),
               ("cat .env", "ok"), ("pytest -q", "error"), ("git push origin main", "ok")]
    assert [(e, a, s) for e, _, a, s in rows] == [
        *(("a001", *r) for r in session), *(("a002", *r) for r in release),
        ("b001", "grep -rn apply_discount src", "ok"), *(("b001", *r) for r in session),
        *(("b002", *r) for r in release)]
    assert store.sql("SELECT count(*) FROM tool_calls WHERE result_step_idx IS NULL").item() == 0
