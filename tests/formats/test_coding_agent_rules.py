"""docs/formats.md, "Coding-agent sessions and trace-store exports": each rule on a small
hand-written file showing the shape real sessions of current versions have (Claude Code 2.1.x,
Codex CLI 0.14x, LangSmith's runs query, Langfuse's trace list)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tracelab.formats import claude_code, codex
from tracelab.formats.base import Quarantined
from tracelab.formats.source import Source
from tracelab.results.summary import summarize, unread_line
from tracelab.store import Store

SESSION = "5e551014-0000-4000-8000-000000000001"


def _cc(uuid: str, kind: str, content: Any = None, parent: str | None = None, **extra: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"parentUuid": parent, "isSidechain": False, "sessionId": SESSION, "type": kind,
                             "uuid": uuid, "timestamp": f"2026-11-30T10:00:{len(uuid):02d}.000Z",
                             "version": "2.1.180", "cwd": "/repo"}
    if content is not None:
        entry["message"] = {"role": kind, "content": content}
    entry.update(extra)
    return entry


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _one(path: Path) -> dict[str, Any]:
    [(_, episode)] = [i for i in claude_code.episodes(Source(path)) if not isinstance(i, Quarantined)]
    return episode


def _kinds(episode: dict[str, Any]) -> list[str]:
    return [s["kind"] if s["kind"] != "event" else f"event:{s['name']}" for s in episode["steps"]]


# -- Claude Code -------------------------------------------------------------------------------


def test_bookkeeping_after_the_answer_adds_no_step_and_output_is_the_answer(tmp_path: Path) -> None:
    path = _write(tmp_path / "p" / f"{SESSION}.jsonl", [
        _cc("u1", "user", "fix the test"),
        _cc("a1x", "assistant", [{"type": "text", "text": "Fixed."}], "u1"),
        _cc("s1xx", "system", None, "a1x", subtype="stop_hook_summary", hookCount=1, level="suggestion"),
        _cc("s2xxx", "system", None, "s1xx", subtype="turn_duration", durationMs=9),
        {"type": "permission-mode", "permissionMode": "default", "sessionId": SESSION},
        {"type": "mode", "mode": "normal", "sessionId": SESSION},
        {"type": "ai-title", "aiTitle": "Fix the test", "sessionId": SESSION},
        {"type": "last-prompt", "lastPrompt": "fix the test", "sessionId": SESSION},
    ])
    episode = _one(path)
    assert _kinds(episode) == ["user", "assistant"]
    assert (episode["input"], episode["output"]) == ("fix the test", "Fixed.")


def test_an_unknown_entry_type_adds_no_step_is_not_quarantined_and_is_counted(tmp_path: Path) -> None:
    path = _write(tmp_path / "p" / f"{SESSION}.jsonl", [
        _cc("u1", "user", "hi"),
        _cc("w1x", "worktree-state", None, "u1", state={"branch": "main"}),
        _cc("w2xx", "worktree-state", None, "u1", state={"branch": "main"}),
        _cc("a1xxx", "assistant", [{"type": "text", "text": "hello"}], "u1"),
    ])
    source = Source(path)
    items = list(claude_code.episodes(source))
    assert not any(isinstance(i, Quarantined) for i in items)
    assert _kinds(items[-1][1]) == ["user", "assistant"]  # type: ignore[index]
    assert source.unread == {"worktree-state": 2}


def test_an_entry_without_text_is_no_assistant_step_its_thinking_goes_to_the_next(tmp_path: Path) -> None:
    thinking = {"type": "thinking", "thinking": "", "signature": "c2ln"}
    turn = {"id": "msg_1", "model": "claude-opus-4-6"}
    path = _write(tmp_path / "p" / f"{SESSION}.jsonl", [
        _cc("u1", "user", "list files"),
        {**_cc("a1x", "assistant", None, "u1"), "message": {**turn, "role": "assistant", "content": [thinking]}},
        {**_cc("a2xx", "assistant", None, "a1x"), "message": {
            **turn, "role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash",
                                                      "input": {"command": "ls"}}]}},
        _cc("u2xxx", "user", [{"type": "tool_result", "tool_use_id": "t1", "content": "a.txt"}], "a2xx"),
        {**_cc("a3xxxx", "assistant", None, "u2xxx"), "message": {
            "id": "msg_2", "role": "assistant", "content": [{"type": "text", "text": "\n\n"}]}},
        {**_cc("a4xxxxx", "assistant", None, "a3xxxx"), "message": {
            "id": "msg_3", "role": "assistant", "content": [thinking]}},
        {**_cc("a5xxxxxx", "assistant", None, "a4xxxxx"), "message": {
            "id": "msg_4", "role": "assistant", "content": [{"type": "text", "text": "One file: a.txt"}]}},
    ])
    episode = _one(path)
    assert _kinds(episode) == ["user", "tool_call", "tool_result", "event:thinking", "assistant"]
    assert episode["steps"][1]["meta"]["parts"] == [thinking]
    assert episode["output"] == "One file: a.txt"


def test_input_is_the_first_main_chain_user_message_never_a_sub_agents_prompt(tmp_path: Path) -> None:
    path = _write(tmp_path / "p" / f"{SESSION}.jsonl", [
        _cc("c1", "user", "<command-message>review</command-message>\n<command-name>/review</command-name>"),
        _cc("s1x", "user", "Inspect the diff", isSidechain=True, agentId="a1"),
        _cc("s2xx", "assistant", [{"type": "text", "text": "Looks fine"}], "s1x", isSidechain=True, agentId="a1"),
        _cc("u1xxx", "user", "and now push"),
        _cc("a1xxxx", "assistant", [{"type": "text", "text": "Pushed."}], "u1xxx"),
        _cc("s3xxxxx", "assistant", [{"type": "text", "text": "late sub-agent note"}], "s2xx",
            isSidechain=True, agentId="a1"),
    ])
    episode = _one(path)
    assert (episode["input"], episode["output"]) == ("and now push", "Pushed.")


def test_a_sub_agent_file_under_session_subagents_is_linked_by_its_folder(tmp_path: Path) -> None:
    project = tmp_path / "p"
    main = _write(project / f"{SESSION}.jsonl", [
        _cc("u1", "user", "delegate"),
        _cc("a1x", "assistant", [{"type": "tool_use", "id": "t1", "name": "Task",
                                  "input": {"prompt": "search", "subagent_type": "Explore"}}], "u1"),
        _cc("u2xx", "user", [{"type": "tool_result", "tool_use_id": "t1", "content": "found"}], "a1x"),
    ])
    agent = {"sessionId": "agent-a0ad", "agentId": "a0ad", "isSidechain": True}
    sub = _write(project / SESSION / "subagents" / "agent-a0ad.jsonl", [
        {**_cc("c1xxx", "user", "search"), **agent},
        {**_cc("c2xxxx", "assistant", [{"type": "tool_use", "id": "t2", "name": "Grep",
                                         "input": {"pattern": "x"}}], "c1xxx"), **agent},
    ])
    first, second = _one(main), _one(sub)
    assert first == second
    assert [s.get("name") for s in first["steps"] if s["kind"] == "tool_call"] == ["Task", "Grep"]


def test_progress_copies_are_the_sub_agents_steps_when_its_file_is_absent(tmp_path: Path) -> None:
    def progress(uuid: str, copied: dict[str, Any]) -> dict[str, Any]:
        return {**_cc(uuid, "progress", None, "a1x"), "parentToolUseID": "t1", "toolUseID": "agent_msg",
                "data": {"type": "agent_progress", "agentId": "a9", "prompt": "search", "message": copied}}

    call = {"type": "assistant", "uuid": "c2", "timestamp": "2026-11-30T10:00:30Z",
            "message": {"role": "assistant", "content": [
                {"type": "tool_use", "id": "t2", "name": "Grep", "input": {"pattern": "TODO"}}]}}
    result = {"type": "user", "uuid": "c3", "timestamp": "2026-11-30T10:00:31Z",
              "message": {"role": "user", "content": [
                  {"type": "tool_result", "tool_use_id": "t2", "content": "a.py:1"}]}}
    records = [
        _cc("u1", "user", "delegate"),
        _cc("a1x", "assistant", [{"type": "tool_use", "id": "t1", "name": "Task",
                                  "input": {"prompt": "search", "subagent_type": "Explore"}}], "u1"),
        progress("p1xxxxxxxx", call), progress("p2xxxxxxxxx", call), progress("p3xxxxxxxxxx", result),
        _cc("u2xx", "user", [{"type": "tool_result", "tool_use_id": "t1", "content": "found"}], "a1x"),
    ]
    episode = _one(_write(tmp_path / "p" / f"{SESSION}.jsonl", records))
    copies = [s for s in episode["steps"] if (s.get("meta") or {}).get("from_progress")]
    assert [(s["kind"], s.get("name")) for s in copies] == [("tool_call", "Grep"), ("tool_result", None)]
    assert all(s["meta"]["sidechain"] and s["meta"]["agent_id"] == "a9" for s in copies)
    # with the sub-agent's own file present, the copies add nothing
    agent = {"isSidechain": True, "agentId": "a9"}
    _write(tmp_path / "p" / "agent-a9.jsonl", [{**call, **agent, "sessionId": SESSION, "parentUuid": None},
                                                {**result, **agent, "sessionId": SESSION, "parentUuid": "c2"}])
    episode = _one(tmp_path / "p" / f"{SESSION}.jsonl")
    assert not any((s.get("meta") or {}).get("from_progress") for s in episode["steps"])
    assert sum(1 for s in episode["steps"] if s.get("name") == "Grep") == 1


def test_a_dropped_file_repeating_a_uuid_with_other_content_rewrites_nothing(store: Store, tmp_path: Path) -> None:
    project = tmp_path / "p"
    _write(project / f"{SESSION}.jsonl", [
        _cc("u1", "user", "clean up"),
        _cc("a1x", "assistant", [{"type": "tool_use", "id": "t1", "name": "Bash",
                                  "input": {"command": "rm -rf /"}}], "u1"),
    ])
    _write(project / "dropped.jsonl", [
        {**_cc("a1x", "assistant", [{"type": "tool_use", "id": "t1", "name": "Bash",
                                     "input": {"command": "ls build/"}}], "u1"),
         "timestamp": "2026-11-30T09:00:00.000Z"},
    ])
    report = store.ingest([project], format="claude-code")
    assert report.quarantined == 2
    rows = store.sql("SELECT source_uri, line, reason FROM quarantine ORDER BY source_uri").rows()
    assert [(Path(uri).name, line) for uri, line, _ in rows] == [
        (f"{SESSION}.jsonl", 2), ("dropped.jsonl", 1)]
    assert "dropped.jsonl line 1" in rows[1 - 1][2] and f"{SESSION}.jsonl line 2" in rows[1][2]
    assert "neither is kept" in rows[0][2]
    assert store.sql("SELECT count(*) FROM tool_calls").item() == 0


# -- Codex CLI ---------------------------------------------------------------------------------


def _rollout(tmp_path: Path, *items: dict[str, Any], extra: list[dict[str, Any]] | None = None) -> Path:
    lines = [{"timestamp": "2026-11-30T10:00:00.000Z", "type": "session_meta",
              "payload": {"id": "019f0000-0000-7000-8000-000000000001", "cli_version": "0.146.0"}}]
    lines += [{"timestamp": "2026-11-30T10:00:01.000Z", "type": "response_item", "payload": i} for i in items]
    return _write(tmp_path / "rollout-2026-11-30T10-00-00-019f.jsonl", lines + (extra or []))


def _user(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def _answer(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}


def test_codex_unknown_line_types_are_counted_and_unreadable_timestamps_are_null(
        store: Store, tmp_path: Path) -> None:
    path = _rollout(tmp_path, _user("hi"), _answer("hello"), extra=[
        {"timestamp": "2026-11-30T10:00:02.000Z", "type": "world_state", "payload": {"full": True}},
        {"timestamp": "2026-11-30T10:00:02.000Z", "type": "world_state", "payload": {"full": False}},
        {"timestamp": "not a time", "type": "inter_agent_communication_metadata", "payload": {}},
        {"timestamp": "[trimmed]", "type": "event_msg", "payload": {"type": "error", "message": "x"}},
    ])
    report = store.ingest([path], format="auto")
    assert (report.added, report.quarantined) == (1, 0)
    assert report.files[0].unread == {"world_state": 2, "inter_agent_communication_metadata": 1}
    assert store.sql("SELECT kind, ts IS NULL FROM steps ORDER BY idx").rows() == [
        ("user", False), ("assistant", False), ("error", True)]
    assert store.sql("SELECT output FROM episodes").item() == "hello"
    summary = summarize(store)  # what `tracelab info` prints
    assert [unread_line(f, c) for f, c in summary.unread.items()] == [
        "codex: 3 lines of 2 unknown types not read: world_state, inter_agent_communication_metadata"]


def test_codex_injected_user_items_are_events(tmp_path: Path) -> None:
    path = _rollout(tmp_path, _user("<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>"),
                    _user("<turn_aborted>\nThe user interrupted the previous turn on purpose.\n</turn_aborted>"),
                    _user("now run the tests"), _answer("All pass."))
    [(_, episode)] = list(codex.episodes(Source(path)))
    assert _kinds(episode) == ["event:context", "event:context", "user", "assistant"]
    assert episode["input"] == "now run the tests"


def test_codex_a_patch_that_did_not_apply_is_a_failed_call(store: Store, tmp_path: Path) -> None:
    patch = "*** Begin Patch\n*** Update File: a.py\n@@\n-x\n+y\n*** End Patch"
    path = _rollout(tmp_path, _user("edit"),
                    {"type": "custom_tool_call", "call_id": "c1", "name": "apply_patch", "input": patch},
                    {"type": "custom_tool_call_output", "call_id": "c1",
                     "output": "apply_patch verification failed: Failed to find expected lines in a.py:\n-x"})
    store.ingest([path], format="codex")
    assert store.sql("SELECT tool_name, status, error FROM tool_calls").rows() == [
        ("apply_patch", "error", "apply_patch verification failed: Failed to find expected lines in a.py:")]


def test_codex_every_call_item_is_a_call_with_its_result(store: Store, tmp_path: Path) -> None:
    path = _rollout(tmp_path, _user("look it up"),
                    {"type": "web_search_call", "status": "completed",
                     "action": {"type": "search", "query": "duckdb json"}},
                    {"type": "tool_search_call", "call_id": "c2", "status": "completed",
                     "arguments": {"query": "calendar"}},
                    {"type": "tool_search_output", "call_id": "c2", "status": "completed", "tools": []},
                    {"type": "future_thing_call", "call_id": "c3", "arguments": {}},
                    _answer("Found it."))
    store.ingest([path], format="codex")
    assert store.sql("SELECT tool_name, status, args->>'$.query' FROM tool_calls ORDER BY call_index").rows() == [
        ("web_search", "ok", "duckdb json"), ("tool_search", "ok", "calendar"), ("future_thing", "missing", None)]


# -- trace stores --------------------------------------------------------------------------------


def test_a_langsmith_runs_query_page_is_read_like_an_array(store: Store, tmp_path: Path) -> None:
    run = {"id": "r1", "trace_id": "r1", "run_type": "chain", "name": "agent", "inputs": {"input": "hi"},
           "outputs": {"output": "hello"}, "start_time": "2026-11-30T10:00:00", "end_time": "yesterday"}
    path = tmp_path / "page.json"
    path.write_text(json.dumps({"runs": [run], "cursors": {"next": None}}), encoding="utf-8")
    report = store.ingest([path], format="auto")
    assert (report.files[0].format, report.added, report.quarantined) == ("langsmith", 1, 0)
    assert store.sql("SELECT input, output, ended_at IS NULL FROM episodes").row(0) == ("hi", "hello", True)


def test_a_langfuse_trace_of_observation_ids_is_quarantined_with_its_reason(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "traces.json"
    path.write_text(json.dumps({"data": [{"id": "t1", "timestamp": "2026-11-30T10:00:00Z",
                                          "observations": ["o1", "o2"]}], "meta": {"page": 1}}),
                    encoding="utf-8")
    report = store.ingest([path], format="auto")
    assert (report.files[0].format, report.quarantined) == ("langfuse", 1)
    assert store.sql("SELECT reason FROM quarantine").item() == \
        "observations are ids only: export the trace with its observations"


def test_a_store_written_before_sources_unread_opens_and_gains_it(tmp_path: Path) -> None:
    import duckdb

    from tracelab.store import open_store

    path = tmp_path / "old.duckdb"
    with open_store(path):
        pass
    con = duckdb.connect(str(path))
    con.execute("ALTER TABLE sources DROP COLUMN unread")
    con.close()
    rollout = _rollout(tmp_path, _user("hi"), extra=[
        {"timestamp": "2026-11-30T10:00:02.000Z", "type": "world_state", "payload": {}}])
    with open_store(path) as store:
        store.ingest([rollout], format="codex")
        assert json.loads(store.sql("SELECT unread FROM sources").item()) == {"world_state": 1}


def test_a_session_opening_with_queue_operation_lines_is_claimed_and_grouped(tmp_path: Path) -> None:
    from tracelab.ingest.prepare import detect_format

    project = tmp_path / "p"
    opening = [{"type": "queue-operation", "operation": "enqueue", "timestamp": "2026-11-30T10:00:00.000Z",
                "sessionId": SESSION, "content": "fix it"},
               {"type": "queue-operation", "operation": "dequeue", "timestamp": "2026-11-30T10:00:00.001Z",
                "sessionId": SESSION}]
    main = _write(project / f"{SESSION}.jsonl", [*opening, _cc("u1", "user", "fix it")])
    sub = _write(project / "agent-b1.jsonl", [
        {**_cc("c1x", "user", "look"), "isSidechain": True, "agentId": "b1"},
        {**_cc("c2xx", "assistant", [{"type": "text", "text": "seen"}], "c1x"), "isSidechain": True,
         "agentId": "b1"}])
    assert detect_format(Source(main)) is claude_code
    assert _one(main) == _one(sub)
    assert _kinds(_one(main)) == ["user", "user", "assistant"]


def test_trace_stores_count_newer_run_types_and_drop_textless_answers(
        store: Store, tmp_path: Path) -> None:
    runs = tmp_path / "runs.jsonl"
    root = {"id": "t1", "trace_id": "t1", "run_type": "chain", "name": "agent", "inputs": {"input": "hi"},
            "outputs": {"output": "hello"}, "start_time": "2026-11-30T10:00:00"}
    runs.write_text(json.dumps(root) + "\n" + json.dumps(
        {"id": "r2", "trace_id": "t1", "parent_run_id": "t1", "run_type": "agent_step", "name": "plan",
         "start_time": "2026-11-30T10:00:01"}) + "\n", encoding="utf-8")
    report = store.ingest([runs], format="langsmith")
    assert (report.added, report.quarantined, report.files[0].unread) == (1, 0, {"run_type:agent_step": 1})
    llm = {"id": "t2", "trace_id": "t2", "run_type": "llm", "name": "model", "start_time": "2026-11-30T10:00:00",
           "inputs": {"messages": [{"role": "user", "content": "hi"}]},
           "outputs": {"choices": [{"message": {"role": "assistant", "content": "\n\n"}}]}}
    (tmp_path / "llm").mkdir()
    (tmp_path / "llm" / "runs.jsonl").write_text(json.dumps(llm) + "\n", encoding="utf-8")
    store.ingest([tmp_path / "llm"], format="langsmith")
    assert store.sql("SELECT kind FROM steps WHERE episode_id = 't2' ORDER BY idx").rows() == [("user",)]


def test_an_unreadable_claude_code_timestamp_is_a_null_ts_never_a_lost_entry(tmp_path: Path) -> None:
    path = _write(tmp_path / "p" / f"{SESSION}.jsonl", [
        _cc("u1", "user", "hi"),
        {**_cc("a1x", "assistant", [{"type": "text", "text": "hello"}], "u1"), "timestamp": 1764496800},
        {**_cc("a2xx", "assistant", [{"type": "text", "text": "bye"}], "a1x"), "timestamp": "[trimmed]"},
    ])
    items = list(claude_code.episodes(Source(path)))
    assert not any(isinstance(i, Quarantined) for i in items)
    episode = items[-1][1]  # type: ignore[index]
    assert [("ts" in s, s.get("text")) for s in episode["steps"]] == [(True, "hi"), (False, "hello"), (False, "bye")]
    assert episode["output"] == "bye" and episode["ended_at"] == episode["started_at"]


def test_codex_an_item_of_a_skill_body_and_the_users_words_keeps_the_words(tmp_path: Path) -> None:
    skill = "<skill>\n<name>frontend</name>\n<path>/skills/frontend/SKILL.md</path>\nDo it well.\n</skill>"
    mixed = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": skill},
                                                            {"type": "input_text", "text": "make the card nicer"}]}
    path = _rollout(tmp_path, mixed, _answer("Done."), _user("<skill> what is this?"), _answer("A tag."))
    [(_, episode)] = list(codex.episodes(Source(path)))
    assert [(s["kind"], s.get("text")) for s in episode["steps"] if s["kind"] in ("user", "event")] == [
        ("event", None), ("user", "make the card nicer"), ("user", "<skill> what is this?")]
    assert episode["steps"][0]["data"]["text"] == skill
    assert episode["input"] == "make the card nicer"


def test_a_progress_copy_of_a_bare_message_is_read_too(tmp_path: Path) -> None:
    bare = {"role": "assistant", "content": [{"type": "tool_use", "id": "t7", "name": "Read",
                                              "input": {"file_path": "/repo/a.py"}}]}
    episode = _one(_write(tmp_path / "p" / f"{SESSION}.jsonl", [
        _cc("u1", "user", "delegate"),
        {**_cc("p1x", "progress", None, "u1"), "parentToolUseID": "t1",
         "data": {"type": "agent_progress", "agentId": "a3", "message": bare}},
    ]))
    assert [(s["kind"], s.get("name"), s["meta"]["from_progress"]) for s in episode["steps"][1:]] == [
        ("tool_call", "Read", True)]
