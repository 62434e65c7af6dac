"""tau-bench trajectories: the mapping and ingest of the hand-written sample."""
from __future__ import annotations

import json
from pathlib import Path

from tracelab.formats import tau_bench
from tracelab.formats.base import Quarantined
from tracelab.formats.source import Source

SAMPLE = Path(__file__).resolve().parents[2] / "sample_traces" / "tau-bench" / "retail_runs.json"


def run(task_id, traj, **fields):
    """A tau-bench run as the benchmark writes it."""
    return {"task_id": task_id, "reward": 1.0, "info": {"source": "user"}, "traj": traj,
            "trial": 0, **fields}


def write_json(tmp_path: Path, document, name: str = "runs.json") -> Source:
    path = tmp_path / name
    path.write_text(json.dumps(document), encoding="utf-8")
    return Source(path)


# -- mapping ---------------------------------------------------------------------------------


def test_a_run_maps_like_a_chat_log_with_task_id_reward_and_meta(tmp_path: Path) -> None:
    source = write_json(tmp_path, [run(12, [
        {"role": "system", "content": "policy"},
        {"role": "user", "content": "Cancel #W1"},
        {"content": None, "role": "assistant", "tool_calls": [
            {"function": {"arguments": "{\"order_id\":\"#W1\"}", "name": "cancel_pending_order"},
             "id": "call_1", "type": "function"}]},
        {"role": "tool", "tool_call_id": "call_1", "name": "cancel_pending_order",
         "content": "{\"status\": \"cancelled\"}"},
        {"content": "Cancelled.", "role": "assistant"}])])
    [(line, episode)] = list(tau_bench.episodes(source))
    assert line == 1
    assert episode == {
        "episode_id": f"{source.content_hash[:16]}:1",
        "case_id": "12",
        "reward": 1.0,
        "meta": {"info": {"source": "user"}, "trial": 0},
        "input": "Cancel #W1",
        "output": "Cancelled.",
        "steps": [
            {"kind": "system", "text": "policy"},
            {"kind": "user", "text": "Cancel #W1"},
            {"kind": "tool_call", "name": "cancel_pending_order", "call_id": "call_1",
             "args": "{\"order_id\":\"#W1\"}"},
            {"kind": "tool_result", "call_id": "call_1", "name": "cancel_pending_order",
             "text": "{\"status\": \"cancelled\"}", "status": "ok"},
            {"kind": "assistant", "text": "Cancelled."},
        ],
    }


def test_a_tool_message_starting_with_error_is_an_error(tmp_path: Path) -> None:
    source = write_json(tmp_path, [run(1, [
        {"role": "tool", "tool_call_id": "a", "name": "f", "content": "Error: gift card balance is not enough"},
        {"role": "tool", "tool_call_id": "b", "name": "f", "content": "No Error: here"},
        {"role": "tool", "tool_call_id": "c", "name": "f", "content": "error: lower case is data"}])])
    [(_, episode)] = list(tau_bench.episodes(source))
    assert [(s["status"], s.get("error")) for s in episode["steps"]] == [
        ("error", "Error: gift card balance is not enough"), ("ok", None), ("ok", None)]


def test_a_run_records_no_tool_list_so_tools_stay_unknown(tmp_path: Path) -> None:
    source = write_json(tmp_path, [run(0, [{"role": "user", "content": "hi"}])])
    [(_, episode)] = list(tau_bench.episodes(source))
    assert "tools" not in episode


def test_an_element_that_is_not_a_run_is_quarantined_by_position(tmp_path: Path) -> None:
    source = write_json(tmp_path, [
        run(0, [{"role": "user", "content": "hi"}]),
        {"task_id": 1, "traj": "not a list"},
        run(2, [{"role": "robot", "content": "beep"}])])
    items = list(tau_bench.episodes(source))
    assert [type(i).__name__ for i in items] == ["tuple", "Quarantined", "Quarantined"]
    assert (items[1].line, items[1].reason) == (
        2, "not a tau-bench run: expected an object with `task_id` and a `traj` list")
    assert items[2].line == 3 and items[2].reason.startswith("traj[0]: unknown role 'robot'")


def test_json_lines_runs_are_read_too(write_jsonl) -> None:
    path = write_jsonl([run(5, [{"role": "user", "content": "hi"}])])
    [(line, episode)] = list(tau_bench.episodes(Source(path)))
    assert (line, episode["case_id"], episode["input"]) == (1, "5", "hi")


# -- detection -------------------------------------------------------------------------------


def test_claims_runs_but_not_a_tool_schema_list_or_a_chat_log(tmp_path: Path) -> None:
    assert tau_bench.claims(Source(SAMPLE))
    schema = write_json(tmp_path, [{"type": "function", "function": {"name": "book_reservation"}}],
                        "tools_schema.json")
    chat = write_json(tmp_path, [{"messages": [{"role": "user", "content": "hi"}]}], "chat.json")
    assert not tau_bench.claims(schema)
    assert not tau_bench.claims(chat)


# -- ingest of the sample --------------------------------------------------------------------


def test_sample_ingests_calls_with_the_error_convention(store) -> None:
    report = store.ingest([SAMPLE])
    assert (report.added, report.quarantined, report.files[0].format) == (2, 0, "tau-bench")
    rows = store.sql(
        "SELECT e.case_id, t.call_index, t.tool_name, t.status, t.error, t.args->>'order_id'"
        " FROM tool_calls t JOIN episodes e USING (episode_id)"
        " ORDER BY e.source_line, t.call_index").rows()
    assert rows == [
        ("3", 0, "get_user_details", "ok", None, None),
        ("3", 1, "get_order_details", "ok", None, "#W7731001"),
        ("3", 2, "cancel_pending_order", "ok", None, "#W7731001"),
        ("7", 0, "return_delivered_order_items", "error",
         "Error: non-delivered order cannot be returned", "#W5520417"),
    ]


def test_sample_episodes_reward_tools_unknown_and_output(store) -> None:
    store.ingest([SAMPLE])
    rows = store.sql(
        "SELECT case_id, reward, tools_declared, output IS NULL, meta->>'$.trial'"
        " FROM episodes ORDER BY source_line").rows()
    assert rows == [("3", 1.0, False, False, "0"), ("7", 0.0, False, True, "1")]


def test_sample_gift_card_code_leaks_into_the_output(store) -> None:
    store.ingest([SAMPLE])
    origins = store.sql(
        "SELECT DISTINCT origin FROM transcript WHERE text LIKE '%GC-8841-ZX7Q%' ORDER BY 1").rows()
    assert origins == [("output",), ("step.text",)]


def test_quarantined_runs_do_not_stop_the_others(tmp_path: Path) -> None:
    source = write_json(tmp_path, [5, run(1, [])])
    items = list(tau_bench.episodes(source))
    assert isinstance(items[0], Quarantined) and items[0].line == 1
    assert items[1][0] == 2
