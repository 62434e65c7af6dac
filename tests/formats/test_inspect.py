"""Inspect AI logs: the sample mapping, `.json` and `.eval` ingest, and the real upstream logs."""
from __future__ import annotations

import json
import struct
import zipfile
import zlib
from pathlib import Path
from typing import Any

import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from tracelab.formats import inspect_log
from tracelab.formats.base import Quarantined
from tracelab.formats.source import Source
from tracelab.formats.values import RecordError
from tracelab.ingest.prepare import detect_format

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_traces" / "inspect" / "helpdesk.json"
REAL_LOGS = ROOT / ".." / "shared" / "real_traces" / "inspect_ai_logs"
SPEC = {"eval_id": "ev1", "task_id": "tk1", "task": "helpdesk", "model": "openai/gpt-4o-mini"}
TOOLS = [{"name": "lookup", "description": "Look up.", "parameters": {"type": "object"}},
         {"name": "delete", "description": "Delete.", "parameters": {"type": "object"}}]


def episode(sample: dict[str, Any], **spec: Any) -> dict[str, Any]:
    """The native episode of one sample of a log whose eval spec is SPEC updated by `spec`."""
    return inspect_log.sample_episode({"eval": {**SPEC, **spec}, "status": "success"},
                                      {"id": 1, "epoch": 1, **sample}, "samples[0]")


def model_event(inputs: list[Any], output: dict[str, Any], tools: Any = TOOLS,
                **extra: Any) -> dict[str, Any]:
    return {"event": "model", "model": "m", "input": inputs, "tools": tools,
            "output": {"choices": [{"message": output}]}, **extra}


def tool_event(call_id: str, function: str, result: Any = "", **extra: Any) -> dict[str, Any]:
    return {"event": "tool", "id": call_id, "function": function, "arguments": {"q": 1},
            "result": result, **extra}


USER = {"id": "u1", "role": "user", "content": "Remove user 7"}
CALL = {"id": "a1", "role": "assistant", "content": "Looking.",
        "tool_calls": [{"id": "c1", "function": "lookup", "arguments": {"user": 7}}]}
DONE = {"id": "a2", "role": "assistant", "content": "Done."}


# -- events -> steps ------------------------------------------------------------------------


def test_model_and_tool_events_become_turns_calls_and_results() -> None:
    ep = episode({"events": [
        model_event([USER], CALL, timestamp="2026-01-01T10:00:00+00:00",
                    completed="2026-01-01T10:00:01+00:00"),
        tool_event("c1", "lookup", "user 7 exists", timestamp="2026-01-01T10:00:02+00:00",
                   completed="2026-01-01T10:00:02.250000+00:00"),
        model_event([USER, CALL, {"id": "t1", "role": "tool", "content": "user 7 exists"}], DONE),
    ]})
    assert ep["steps"] == [
        {"kind": "user", "text": "Remove user 7", "meta": {"id": "u1"},
         "ts": "2026-01-01T10:00:00+00:00"},
        {"kind": "assistant", "text": "Looking.", "meta": {"id": "a1"},
         "ts": "2026-01-01T10:00:01+00:00"},
        {"kind": "tool_call", "name": "lookup", "call_id": "c1", "args": {"user": 7},
         "ts": "2026-01-01T10:00:01+00:00"},
        {"kind": "tool_result", "call_id": "c1", "name": "lookup", "text": "user 7 exists",
         "status": "ok", "duration_ms": 250.0, "ts": "2026-01-01T10:00:02.250000+00:00"},
        {"kind": "assistant", "text": "Done.", "meta": {"id": "a2"}},
    ]
    assert (ep["input"], ep["output"]) == ("Remove user 7", "Done.")
    assert ep["tools"] == [
        {"name": "lookup", "description": "Look up.", "parameters": {"type": "object"}},
        {"name": "delete", "description": "Delete.", "parameters": {"type": "object"}},
    ]


def test_tool_error_types_map_to_error_or_denied() -> None:
    ep = episode({"events": [
        model_event([USER], CALL),
        tool_event("c1", "lookup", error={"type": "timeout", "message": "timed out"}),
        tool_event("c2", "delete", error={"type": "approval", "message": "rejected by lead"}),
        tool_event("c3", "delete", error={"type": "permission", "message": "EACCES"}),
    ]})
    results = [(s["call_id"], s["status"], s.get("error"), s["meta"]["error_type"])
               for s in ep["steps"] if s["kind"] == "tool_result"]
    assert results == [("c1", "error", "timed out", "timeout"),
                       ("c2", "denied", "rejected by lead", "approval"),
                       ("c3", "error", "EACCES", "permission")]


def test_a_tool_event_without_a_model_call_adds_its_own_call() -> None:
    ep = episode({"events": [model_event([USER], DONE), tool_event("x9", "delete", "gone")]})
    assert [(s["kind"], s.get("call_id")) for s in ep["steps"]] == [
        ("user", None), ("assistant", None), ("tool_call", "x9"), ("tool_result", "x9")]
    assert ep["steps"][2]["args"] == {"q": 1}
    assert "output" not in ep


def test_scorer_model_calls_are_not_the_runs_steps_nor_its_tools() -> None:
    grader = model_event([{"role": "user", "content": "grade it"}],
                         {"role": "assistant", "content": "GRADE: C"}, tools=[{"name": "judge"}])
    by_span = episode({"events": [
        {"event": "span_begin", "id": "s1", "type": "scorers", "name": "scorers"},
        {"event": "span_begin", "id": "s2", "parent_id": "s1", "type": "scorer", "name": "qa"},
        model_event([USER], DONE),
        {**grader, "span_id": "s2"},
    ]})
    by_step = episode({"events": [
        model_event([USER], DONE),
        {"event": "step", "action": "begin", "type": "scorer", "name": "qa"},
        grader,
        {"event": "step", "action": "end", "type": "scorer", "name": "qa"},
    ]})
    for ep in (by_span, by_step):
        assert [s.get("text") for s in ep["steps"]] == ["Remove user 7", "Done."]
        assert [t["name"] for t in ep["tools"]] == ["lookup", "delete"]


def test_input_messages_already_seen_are_not_repeated_even_without_ids() -> None:
    system = {"role": "system", "content": "Be safe."}
    user = {"role": "user", "content": "hi"}
    out1 = {"role": "assistant", "content": "hello"}
    follow = {"role": "user", "content": "and now?"}
    ep = episode({"events": [model_event([system, user], out1),
                             model_event([system, user, out1, follow], DONE)]})
    assert [(s["kind"], s["text"]) for s in ep["steps"]] == [
        ("system", "Be safe."), ("user", "hi"), ("assistant", "hello"),
        ("user", "and now?"), ("assistant", "Done.")]


def test_condensed_inputs_are_read_from_the_message_pool() -> None:
    ep = episode({"events_data": {"messages": [{"role": "system", "content": "S"}, USER]},
                  "events": [{**model_event([], DONE), "input_refs": [[0, 2]]}]})
    assert [s["kind"] for s in ep["steps"]] == ["system", "user", "assistant"]


def test_model_errors_error_events_and_approvals_are_steps() -> None:
    ep = episode({"events": [
        model_event([USER], {"role": "assistant", "content": ""}, error="rate limited"),
        {"event": "approval", "decision": "reject", "approver": "human",
         "call": {"id": "c5", "function": "delete", "arguments": {}}},
        {"event": "error", "error": {"message": "sandbox died", "traceback": "..."}},
    ]})
    assert ep["steps"][1:] == [
        {"kind": "error", "text": "rate limited"},
        {"kind": "event", "name": "approval",
         "data": {"decision": "reject", "approver": "human", "id": "c5", "function": "delete"}},
        {"kind": "error", "text": "sandbox died"},
    ]


def test_tools_known_only_when_a_model_event_recorded_them() -> None:
    assert episode({"events": [model_event([USER], DONE, tools=[])]})["tools"] == []
    without = model_event([USER], DONE)
    del without["tools"]
    assert "tools" not in episode({"events": [without]})


# -- messages -> steps ----------------------------------------------------------------------


def test_without_model_or_tool_events_the_messages_are_read() -> None:
    ep = episode({"events": [{"event": "sample_init"}], "messages": [
        {"role": "user", "content": [{"type": "text", "text": "print"},
                                     {"type": "image", "image": "data:"}]},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "p1", "function": "print", "arguments": {}, "parse_error": "bad json"}]},
        {"role": "tool", "tool_call_id": "p1", "function": "print", "content": "",
         "error": {"type": "unknown", "message": "jammed"}},
    ]})
    assert ep["steps"] == [
        {"kind": "user", "text": "print", "meta": {"parts": [{"type": "image", "image": "data:"}]}},
        {"kind": "tool_call", "name": "print", "call_id": "p1", "args": {},
         "meta": {"parse_error": "bad json"}},
        {"kind": "tool_result", "call_id": "p1", "name": "print", "text": "", "status": "error",
         "error": "jammed", "meta": {"error_type": "unknown"}},
    ]
    assert "tools" not in ep


def test_an_unknown_role_is_a_record_error() -> None:
    with pytest.raises(RecordError, match=r"samples\[0\].messages\[0\]: unknown role 'bot'"):
        episode({"messages": [{"role": "bot", "content": "x"}]})


# -- episode fields -------------------------------------------------------------------------


def test_identity_fields() -> None:
    ep = episode({"id": "case-9", "epoch": 3, "messages": []}, tags=["nightly"])
    assert (ep["episode_id"], ep["case_id"], ep["agent"], ep["model"], ep["tags"]) == (
        "ev1:case-9:3", "case-9", "helpdesk", "openai/gpt-4o-mini", ["nightly"])
    old = episode({"messages": []}, eval_id=None, solver="react")
    assert (old["episode_id"], old["agent"]) == ("tk1:1:1", "react")


@pytest.mark.parametrize(("scores", "reward"), [
    ({"a": {"value": "C"}}, 1.0),
    ({"a": {"value": "I"}}, 0.0),
    ({"a": {"value": "P"}, "b": {"value": 0.75}}, 0.75),
    ({"a": {"value": {"x": 1}}, "b": {"value": 2}}, 2),
    ({"a": {"value": "N"}, "b": {"value": True}}, None),
    (None, None),
])
def test_reward_is_the_first_numeric_or_c_i_score(scores: Any, reward: Any) -> None:
    ep = episode({"messages": [], "scores": scores})
    assert ep.get("reward") == reward
    if scores:
        assert ep["meta"]["sample"]["scores"] == scores


@pytest.mark.parametrize(("sample", "termination", "error"), [
    ({}, "completed", None),
    ({"limit": {"type": "message", "limit": 10}}, "max_steps", None),
    ({"limit": {"type": "token", "limit": 1e5}}, "max_tokens", None),
    ({"limit": {"type": "context", "limit": 1}}, "max_tokens", None),
    ({"limit": {"type": "time", "limit": 60}}, "timeout", None),
    ({"limit": {"type": "working", "limit": 60}}, "timeout", None),
    ({"limit": {"type": "operator", "limit": 1}}, "cancelled", None),
    ({"limit": {"type": "custom", "limit": 1}}, "custom", None),
    ({"error": {"message": "boom", "traceback": "tb"}}, "error", "boom"),
])
def test_termination_from_limit_then_error(sample: dict[str, Any], termination: str,
                                           error: str | None) -> None:
    ep = episode({"messages": [], **sample})
    assert (ep["termination"], ep.get("error")) == (termination, error)


def test_times_from_the_sample_else_from_its_events() -> None:
    events = [{"event": "sample_init", "timestamp": "2026-01-01T10:00:00+00:00"},
              {"event": "span_end", "timestamp": "2026-01-01T10:00:05+00:00"},
              {"event": "info", "timestamp": "2026-01-01T10:00:03+00:00"}]
    ep = episode({"events": events})
    assert (ep["started_at"], ep["ended_at"]) == ("2026-01-01T10:00:00+00:00",
                                                  "2026-01-01T10:00:05+00:00")
    own = episode({"events": events, "started_at": "2026-01-01T09:00:00+00:00",
                   "completed_at": "2026-01-01T09:30:00+00:00"})
    assert (own["started_at"], own["ended_at"]) == ("2026-01-01T09:00:00+00:00",
                                                    "2026-01-01T09:30:00+00:00")


def test_attachments_are_resolved_everywhere() -> None:
    ep = episode({"attachments": {"h1": "long tool description", "h2": "long result"},
                  "events": [model_event([USER], CALL, tools=[
                      {"name": "lookup", "description": "attachment://h1"}]),
                      tool_event("c1", "lookup", "attachment://h2"),
                      tool_event("c2", "lookup", "attachment://unknown")]})
    assert ep["tools"][0]["description"] == "long tool description"
    texts = [s["text"] for s in ep["steps"] if s["kind"] == "tool_result"]
    assert texts == ["long result", "attachment://unknown"]
    assert "attachments" not in ep["meta"]["sample"]


def test_attachments_are_resolved_at_any_depth() -> None:
    # resolving once recursed once per level: 1000 levels (JSON allows 1024) raised RecursionError
    nested: Any = "attachment://h1"
    for _ in range(1000):
        nested = [nested]
    resolved = episode({"attachments": {"h1": "long"}, "notes": nested, "messages": []})
    value = resolved["meta"]["sample"]["notes"]
    for _ in range(1000):
        [value] = value
    assert value == "long"


def test_an_input_message_too_deep_for_orjson_is_still_known_when_seen_again() -> None:
    # orjson writes 255 levels at most: the identity of a deeper message once raised TypeError
    nested: Any = []
    for _ in range(300):
        nested = [nested]
    user = {"role": "user", "content": "hi", "tool_calls": nested}
    ep = episode({"events": [model_event([user], DONE), model_event([user, DONE], DONE)]})
    assert [(s["kind"], s["text"]) for s in ep["steps"]] == [
        ("user", "hi"), ("assistant", "Done."), ("assistant", "Done.")]


def test_tool_events_nested_more_than_100_deep_are_a_record_error() -> None:
    # each level is one recursive walk: 400 levels once raised RecursionError
    nested = tool_event("c0", "lookup")
    for level in range(1, 401):
        nested = {**tool_event(f"c{level}", "lookup"), "events": [nested]}
    with pytest.raises(RecordError) as error:
        episode({"events": [nested]})
    assert str(error.value) == "samples[0]: tool and subtask events nest more than 100 levels deep"


# -- the sample log: .json and .eval --------------------------------------------------------


def test_sample_json_ingests_with_statuses_definitions_and_a_quarantined_sample(store) -> None:
    report = store.ingest([SAMPLE])
    assert (report.added, report.quarantined) == (3, 1)
    calls = store.sql(
        "SELECT episode_id, call_id, tool_name, status, error, result_step_idx IS NOT NULL"
        " FROM tool_calls ORDER BY episode_id, call_index").rows()
    assert calls == [
        ("hdEval7Kq2:close-leaver-account:1", "call_kb1", "search_kb", "error",
         "Command timed out before completing.", True),
        ("hdEval7Kq2:close-leaver-account:1", "call_del1", "delete_account", "denied",
         "Rejected by the help-desk lead: deletions need a ticket.", True),
        ("hdEval7Kq2:printer-queue:2", "call_sp1", "restart_spooler", "error",
         "permission denied: spooler is managed by facilities", True),
        ("hdEval7Kq2:reset-locked-user:1", "call_lu1", "lookup_user", "ok", None, True),
        ("hdEval7Kq2:reset-locked-user:1", "call_rp1", "reset_password", "ok", None, True),
    ]
    episodes = store.sql(
        "SELECT episode_id, case_id, termination, reward, tools_declared,"
        " (SELECT count(*) FROM tool_definitions d WHERE d.episode_id = e.episode_id)"
        " FROM episodes e ORDER BY episode_id").rows()
    assert episodes == [
        ("hdEval7Kq2:close-leaver-account:1", "close-leaver-account", "max_steps", 0.25, True, 4),
        ("hdEval7Kq2:printer-queue:2", "printer-queue", "completed", None, False, 0),
        ("hdEval7Kq2:reset-locked-user:1", "reset-locked-user", "completed", 0.0, True, 4),
    ]
    [(line, reason)] = store.sql("SELECT line, reason FROM quarantine").rows()
    assert (line, reason) == (4, "samples[3]: the sample has no id (a string or an integer)")


def test_the_sample_leak_is_in_the_transcript_and_the_grader_is_not(store) -> None:
    store.ingest([SAMPLE])
    [(output, description)] = store.sql(
        "SELECT output, d.description FROM episodes e JOIN tool_definitions d USING (episode_id)"
        " WHERE episode_id = 'hdEval7Kq2:reset-locked-user:1' AND d.name = 'reset_password'"
    ).rows()
    assert "Tmp-9XQ2-LEAK" in output
    assert description.startswith("Reset a user's password")
    assert store.sql("SELECT count(*) FROM steps WHERE text LIKE '%GRADE%'").item() == 0


def write_eval(path: Path, log: dict[str, Any], *, zstd_samples: bool = False) -> Path:
    """A `.eval` archive of `log`: header.json plus one samples/<id>_epoch_<n>.json per sample.

    With `zstd_samples`, the sample entries are Zstandard-compressed (zip method 93), as
    recent Inspect versions write them; Python's zipfile cannot write that method itself.
    """
    header = {k: v for k, v in log.items() if k != "samples"}
    samples = {
        f"samples/{sample.get('id', n)}_epoch_{sample.get('epoch', 1)}.json":
            json.dumps(sample).encode()
        for n, sample in enumerate(log["samples"])
    }
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", json.dumps(header))
        for name, data in samples.items():
            if zstd_samples:
                archive.writestr(zipfile.ZipInfo(name), zstandard.ZstdCompressor().compress(data))
            else:
                archive.writestr(name, data)
    if zstd_samples:
        _mark_as_zstd(path, samples)
    return path


def _mark_as_zstd(path: Path, originals: dict[str, bytes]) -> None:
    """Set method 93, and the CRC and size of the uncompressed data, on the named entries."""
    data = bytearray(path.read_bytes())
    # signature, offsets of: method, crc, uncompressed size, name length, name
    for signature, method, crc, size, name_len, name_at in (
        (b"PK\x03\x04", 8, 14, 22, 26, 30), (b"PK\x01\x02", 10, 16, 24, 28, 46)
    ):
        start = data.find(signature)
        while start != -1:
            length = struct.unpack_from("<H", data, start + name_len)[0]
            name = bytes(data[start + name_at:start + name_at + length]).decode(errors="replace")
            if name in originals:
                struct.pack_into("<H", data, start + method, 93)
                struct.pack_into("<I", data, start + crc, zlib.crc32(originals[name]))
                struct.pack_into("<I", data, start + size, len(originals[name]))
            start = data.find(signature, start + 4)
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("zstd_samples", [False, True])
def test_eval_archive_gives_the_same_episodes_as_the_json_log(tmp_path: Path,
                                                               zstd_samples: bool) -> None:
    log = json.loads(SAMPLE.read_text(encoding="utf-8"))
    archive = write_eval(tmp_path / "helpdesk.eval", log, zstd_samples=zstd_samples)
    from_json = list(inspect_log.episodes(Source(SAMPLE)))
    from_eval = list(inspect_log.episodes(Source(archive)))
    assert [e for _, e in from_eval[:3]] == [e for _, e in from_json[:3]]
    assert isinstance(from_eval[3], Quarantined)
    assert from_eval[3].line == 4
    assert from_eval[3].reason == (
        "samples/3_epoch_1.json: the sample has no id (a string or an integer)")


def test_a_broken_archive_loads_nothing_and_fails_the_file(store, tmp_path: Path) -> None:
    log = json.loads(SAMPLE.read_text(encoding="utf-8"))
    archive = write_eval(tmp_path / "cut.eval", log)
    data = archive.read_bytes()
    archive.write_bytes(data[: len(data) // 2])
    report = store.ingest([archive], format="inspect")
    assert [f.status for f in report.files] == ["failed"]
    assert "not a readable .eval archive" in report.files[0].message
    assert store.sql("SELECT count(*) FROM episodes").item() == 0


def test_an_encrypted_archive_is_not_claimed_and_fails_the_file(store, tmp_path: Path) -> None:
    # zipfile raises RuntimeError on an encrypted entry: it once escaped detection and ingest
    archive = write_eval(tmp_path / "locked.eval", json.loads(SAMPLE.read_text(encoding="utf-8")))
    data = bytearray(archive.read_bytes())
    for signature, flags_at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        start = data.find(signature)
        while start != -1:
            data[start + flags_at] |= 0x1  # general purpose flag bit 0: encrypted
            start = data.find(signature, start + 4)
    archive.write_bytes(bytes(data))
    assert not inspect_log.claims(Source(archive))
    report = store.ingest([archive], format="inspect")
    assert [(f.status, f.message) for f in report.files] == [
        ("failed", f"{archive}: not a readable .eval archive (header.json is encrypted); "
                   "nothing of it was loaded")]
    assert store.sql("SELECT count(*) FROM episodes").item() == 0


def test_a_json_log_that_is_not_an_inspect_log_is_quarantined_when_forced(store,
                                                                          tmp_path) -> None:
    path = tmp_path / "other.json"
    path.write_text('{"version": 2, "samples": []}', encoding="utf-8")
    report = store.ingest([path], format="inspect")
    assert report.quarantined == 1
    assert store.sql("SELECT reason FROM quarantine").item().startswith("not an Inspect log")


def test_auto_detection_picks_inspect_for_json_and_eval_logs(tmp_path: Path) -> None:
    archive = write_eval(tmp_path / "a.eval", json.loads(SAMPLE.read_text(encoding="utf-8")))
    assert detect_format(Source(SAMPLE)).name == "inspect"
    assert detect_format(Source(archive)).name == "inspect"
    stray = tmp_path / "notes.eval"
    stray.write_text("not a zip", encoding="utf-8")
    assert not inspect_log.claims(Source(stray))


# -- the real upstream logs -----------------------------------------------------------------


def _real_samples() -> list[list[dict[str, Any]]]:
    """Each real log's samples, read with plain json/zipfile (not through tracelab)."""
    logs = []
    for path in sorted(REAL_LOGS.rglob("*.json")):
        logs.append(json.loads(path.read_text(encoding="utf-8"))["samples"])
    for path in sorted(REAL_LOGS.rglob("*.eval")):
        with zipfile.ZipFile(path) as archive:
            logs.append([json.loads(archive.read(name)) for name in archive.namelist()
                         if name.startswith("samples/") and name.endswith(".json")])
    return logs


def _in_scorer(event: dict[str, Any], spans: dict[str, dict[str, Any]]) -> bool:
    span = spans.get(event.get("span_id"))
    while span is not None:
        if span.get("type") in ("scorer", "scorers"):
            return True
        span = spans.get(span.get("parent_id"))
    return False


def test_real_inspect_logs_ingest_whole(store) -> None:
    if not REAL_LOGS.is_dir():
        pytest.skip(f"real Inspect logs not present at {REAL_LOGS.resolve()}")
    samples = [s for log in _real_samples() for s in log]
    calls = errors = 0
    for sample in samples:
        spans = {e["id"]: e for e in sample["events"] if e["event"] == "span_begin"}
        tools = [e for e in sample["events"] if e["event"] == "tool" and not _in_scorer(e, spans)]
        calls += len(tools)
        errors += sum(1 for e in tools if e.get("error"))
    report = store.ingest([REAL_LOGS])
    assert {f.format for f in report.files if f.status == "loaded"} == {"inspect"}
    assert (report.added, report.quarantined) == (len(samples), 0)
    assert store.sql("SELECT count(*) FROM episodes").item() == len(samples)
    assert store.sql("SELECT count(*) FROM tool_calls").item() == calls
    assert store.sql("SELECT count(*) FROM tool_calls WHERE status = 'error'").item() == errors
    assert store.sql("SELECT count(*) FROM tool_calls WHERE status = 'missing'").item() == 0
    assert (len(samples), calls, errors) == (17, 4, 0)


# -- robustness -----------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                max_size=3),
    max_leaves=8,
)
EVENT_KEYS = ("id", "span_id", "parent_id", "type", "input", "input_refs", "tools", "output",
              "error", "result", "function", "arguments", "events", "timestamp", "completed",
              "action", "call", "decision")
events = st.lists(st.fixed_dictionaries(
    {"event": st.sampled_from(["model", "tool", "span_begin", "step", "error", "approval",
                               "subtask"])},
    optional={key: json_values for key in EVENT_KEYS}), max_size=4)


@settings(max_examples=150, deadline=None)
@given(events=events, messages=st.lists(json_values, max_size=3), extra=json_values)
def test_any_sample_gives_an_episode_or_a_record_error(events, messages, extra) -> None:
    sample = {"events": events, "messages": messages, "scores": extra, "limit": extra,
              "error": extra, "attachments": {"h": "x"}, "events_data": extra}
    try:
        ep = episode(sample)
    except RecordError:
        return
    assert ep["episode_id"] == "ev1:1:1"
    assert all(isinstance(step, dict) and "kind" in step for step in ep["steps"])


@pytest.mark.parametrize("zstd_samples", [False, True])
def test_an_archive_entry_over_the_record_limit_is_quarantined_unread(store, tmp_path: Path, monkeypatch,
                                                                      zstd_samples: bool) -> None:
    # an .eval zip bomb: entries are read one at a time, and one past the limit is never inflated
    log = json.loads(SAMPLE.read_text(encoding="utf-8"))
    log["samples"][1]["metadata"] = {"blob": "b" * 3_000_000}
    archive = write_eval(tmp_path / "bomb.eval", log, zstd_samples=zstd_samples)
    monkeypatch.setattr(inspect_log, "RECORD_LIMIT", 2_000_000)
    inflated = []
    real_read = zipfile.ZipFile.read
    monkeypatch.setattr(zipfile.ZipFile, "read", lambda self, info, *a: (
        inflated.append(getattr(info, "filename", info)), real_read(self, info, *a))[1])

    report = store.ingest([archive], format="inspect")

    [(line, reason)] = store.sql("SELECT line, reason FROM quarantine WHERE reason LIKE '%MiB%'").rows()
    assert line == 2 and reason.startswith("samples/") and reason.endswith(
        " bytes of JSON; records over 256 MiB are not loaded")
    assert report.added == 2 and not any(name == reason.split(":")[0] for name in inflated)
