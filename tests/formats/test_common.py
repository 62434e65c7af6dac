"""The common rules of formats.md, as the shared helpers implement them."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tracelab.formats import anthropic, openai_chat, openai_responses
from tracelab.formats.base import Quarantined
from tracelab.formats.episodes import (
    assistant_turn,
    build_episode,
    content_text,
    episode_fields,
    result_content,
    tool_call_step,
    tool_definition,
    tool_result_step,
)
from tracelab.formats.records import first_record, records
from tracelab.formats.source import Source
from tracelab.formats.values import RecordError, json_text


@pytest.fixture
def source(tmp_path: Path) -> Source:
    path = tmp_path / "one.jsonl"
    path.write_text('{"messages": []}\n', encoding="utf-8")
    return Source(path)


# -- episode fields --------------------------------------------------------------------------


def test_episode_id_prefers_episode_id_then_id_then_metadata(source: Source) -> None:
    record = {"episode_id": "e1", "id": "i1", "metadata": {"episode_id": "m1"}}
    assert episode_fields(record, source, 3, ())["episode_id"] == "e1"
    assert episode_fields({"id": "i1", "metadata": {"episode_id": "m1"}}, source, 3, ())[
        "episode_id"
    ] == "i1"
    assert episode_fields({"metadata": {"episode_id": "m1"}}, source, 3, ())["episode_id"] == "m1"


def test_episode_id_falls_back_to_content_hash_and_line(source: Source) -> None:
    fields = episode_fields({"messages": []}, source, 7, ("messages",))
    assert fields["episode_id"] == f"{source.content_hash[:16]}:7"
    assert fields == {"episode_id": f"{source.content_hash[:16]}:7"}


def test_empty_episode_id_falls_through_to_id(source: Source) -> None:
    assert episode_fields({"episode_id": "", "id": "i9"}, source, 1, ())["episode_id"] == "i9"


def test_labels_come_from_top_level_else_metadata(source: Source) -> None:
    record = {
        "id": "r1",
        "model": "gpt-4o",
        "reward": 0.5,
        "metadata": {"model": "ignored", "case_id": "c-7", "agent": "bot", "tags": ["a"],
                     "termination": "max_steps", "principal": {"user_id": "u1"}},
    }
    fields = episode_fields(record, source, 1, ())
    assert fields["model"] == "gpt-4o"
    assert fields["reward"] == 0.5
    assert fields["case_id"] == "c-7"
    assert fields["agent"] == "bot"
    assert fields["tags"] == ["a"]
    assert fields["termination"] == "max_steps"
    assert fields["principal"] == {"user_id": "u1"}
    assert "agent_version" not in fields


def test_other_top_level_keys_go_to_meta(source: Source) -> None:
    record = {"episode_id": "e1", "id": "resp_1", "messages": [], "tools": [], "region": "eu",
              "metadata": {"case_id": "c1"}}
    fields = episode_fields(record, source, 1, ("messages", "tools"))
    # `id` was not used as the episode id, so it is just another key; metadata is kept whole.
    assert fields["meta"] == {"id": "resp_1", "region": "eu", "metadata": {"case_id": "c1"}}
    assert fields["case_id"] == "c1"


# -- text ------------------------------------------------------------------------------------


def test_content_text_of_string_none_and_parts() -> None:
    assert content_text("hi", "m") == ("hi", [])
    assert content_text(None, "m") == (None, [])
    image = {"type": "image_url", "image_url": {"url": "x"}}
    parts = [{"type": "text", "text": "a"}, image, {"type": "output_text", "text": "b"}, "c"]
    assert content_text(parts, "m") == ("a\nb\nc", [image])


def test_content_text_without_text_parts_is_none() -> None:
    image = {"type": "image", "source": {}}
    assert content_text([image], "m") == (None, [image])
    assert content_text([], "m") == (None, [])


def test_content_text_rejects_other_types() -> None:
    with pytest.raises(RecordError, match=r"messages\[2\]: content is a number"):
        content_text(5, "messages[2]")


def test_result_content_keeps_structured_values_as_result() -> None:
    assert result_content({"rows": 2}, "r") == (None, {"rows": 2}, [])
    assert result_content("ok", "r") == ("ok", None, [])
    assert result_content([{"type": "text", "text": "x"}], "r") == ("x", None, [])


# -- steps -----------------------------------------------------------------------------------


def test_assistant_turn_text_then_calls() -> None:
    call = tool_call_step("f", "c1", '{"a": 1}')
    steps = assistant_turn("Let me look.", [], {}, [call])
    assert steps == [
        {"kind": "assistant", "text": "Let me look."},
        {"kind": "tool_call", "name": "f", "call_id": "c1", "args": '{"a": 1}'},
    ]


def test_assistant_turn_with_empty_text_yields_only_calls() -> None:
    call = tool_call_step("f", None, None)
    assert assistant_turn("", [], {}, [call]) == [{"kind": "tool_call", "name": "f"}]
    assert assistant_turn(None, [], {}, []) == []


def test_assistant_turn_keeps_non_text_parts_and_extra_keys() -> None:
    part = {"type": "thinking", "thinking": "hmm"}
    assert assistant_turn(None, [part], {"name": "bot"}, []) == [
        {"kind": "assistant", "meta": {"name": "bot", "parts": [part]}}
    ]
    call = tool_call_step("f", "c1", None)
    assert assistant_turn("", [], {"refusal": "no"}, [call]) == [
        {"kind": "tool_call", "name": "f", "call_id": "c1", "meta": {"refusal": "no"}}
    ]


def test_tool_call_args_are_kept_as_recorded() -> None:
    assert tool_call_step("f", "", "{not json")["args"] == "{not json"
    assert tool_call_step("f", "", {"b": 2, "a": 1})["args"] == {"b": 2, "a": 1}
    assert tool_call_step("f", "", "")["call_id"] == ""


def test_tool_result_status_and_error_text() -> None:
    assert tool_result_step("c1", None, "done", False) == {
        "kind": "tool_result", "call_id": "c1", "text": "done", "status": "ok",
    }
    assert tool_result_step("c1", "f", "boom", True, "timeout") == {
        "kind": "tool_result", "call_id": "c1", "name": "f", "text": "boom", "status": "error",
        "error": "timeout",
    }
    assert tool_result_step(None, None, None, True, {"code": 7})["error"] == '{"code":7}'
    assert "error" not in tool_result_step(None, None, None, True, True)


def test_json_text_of_a_value_deeper_than_the_recursion_limit_is_a_record_error() -> None:
    # json, the fallback past orjson's 255 levels, recurses per level: once a RecursionError
    nested: Any = []
    for _ in range(300):
        nested = [nested]
    assert json_text(nested) == "[" * 301 + "]" * 301
    for _ in range(700):
        nested = [nested]
    with pytest.raises(RecordError, match="^a value nests too deeply to write as JSON text$"):
        json_text(nested)


def test_json_text_sorts_keys_when_asked() -> None:
    assert json_text({"b": 1, "a": [2, 10**20]}) == '{"b":1,"a":[2,100000000000000000000]}'
    assert json_text({"b": 1, "a": [2, 10**20]}, sort_keys=True) == (
        '{"a":[2,100000000000000000000],"b":1}')


# -- episodes and tools ----------------------------------------------------------------------


def test_build_episode_input_is_first_user_output_is_last_assistant() -> None:
    steps = [{"kind": "system", "text": "s"}, {"kind": "user", "text": "q1"},
             {"kind": "assistant", "text": "a1"}, {"kind": "user", "text": "q2"},
             {"kind": "assistant", "text": "a2"}]
    episode = build_episode({"episode_id": "e"}, steps, None)
    assert (episode["input"], episode["output"]) == ("q1", "a2")
    assert "tools" not in episode


def test_build_episode_output_is_null_when_run_ends_on_a_tool_step() -> None:
    steps = [{"kind": "user", "text": "q"}, {"kind": "assistant", "text": "a"},
             {"kind": "tool_call", "name": "f"}]
    episode = build_episode({"episode_id": "e"}, steps, [])
    assert "output" not in episode
    assert episode["tools"] == []


def test_tool_definition_effect_from_x_effect_then_effect() -> None:
    assert tool_definition("f", "d", {"type": "object"}, {"x-effect": "write"}) == {
        "name": "f", "description": "d", "parameters": {"type": "object"}, "effect": "write",
    }
    assert tool_definition("f", None, None, {}, {"effect": "read"})["effect"] == "read"
    assert "effect" not in tool_definition("f", None, None, {})


# -- reading files ---------------------------------------------------------------------------


def test_records_number_physical_lines_and_quarantine_bad_json(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"a": 1}\n\n{"a": \n[1]\n')
    items = list(records(Source(path)))
    assert items[0] == (1, {"a": 1}, b'{"a": 1}')
    assert isinstance(items[1], Quarantined)
    assert items[1].line == 3
    assert items[1].reason.startswith("invalid JSON")
    assert items[2] == (4, [1], b"[1]")


def test_records_of_a_json_array_are_numbered_by_position(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text(json.dumps([{"a": 1}, {"a": 2}], indent=2), encoding="utf-8")
    items = list(records(Source(path)))
    assert [(line, record) for line, record, _ in items] == [(1, {"a": 1}), (2, {"a": 2})]
    assert first_record(Source(path)) == {"a": 1}


def test_records_of_a_json_document_read_whole_when_asked(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('[{"role": "user"}]', encoding="utf-8")
    items = list(records(Source(path), whole=lambda doc: True))
    assert [(line, record) for line, record, _ in items] == [(1, [{"role": "user"}])]


def test_records_of_a_json_array_too_deep_for_orjson_to_write_keep_no_raw(tmp_path: Path) -> None:
    # orjson reads 1024 levels but writes 255: a raw copy of such an element once raised TypeError
    path = tmp_path / "x.json"
    path.write_text("[" + "[" * 300 + "]" * 300 + "]", encoding="utf-8")
    [(line, record, raw)] = list(records(Source(path)))
    assert (line, json.dumps(record), raw) == (1, "[" * 300 + "]" * 300, None)


# -- every message-log adapter maps or quarantines, never crashes ----------------------------

KEYS = ["role", "content", "type", "text", "tool_calls", "function", "name", "arguments", "id",
        "call_id", "tool_call_id", "tool_use_id", "input", "output", "items", "messages", "tools",
        "system", "instructions", "is_error", "error", "metadata", "episode_id", "parameters",
        "input_schema", "x-effect", "function_call"]
WORDS = ["user", "assistant", "system", "tool", "function", "developer", "text", "tool_use",
         "tool_result", "message", "function_call", "function_call_output", "input_text",
         "output_text", "image", "thinking", "read", "write", ""]
leaves = st.none() | st.booleans() | st.integers() | st.sampled_from(WORDS)
json_values = st.recursive(
    leaves,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(KEYS), inner,
                                                                max_size=6),
    max_leaves=30,
)
# Objects shaped like messages, parts, calls and tools (every key optional, any value), so
# that examples reach deep into the mappings rather than failing at the first check.
shaped = st.deferred(lambda: st.fixed_dictionaries({}, optional={
    key: json_values | st.lists(shaped, max_size=3) | shaped
    for key in ("role", "type", "content", "tool_calls", "function", "text", "input", "output",
                "id", "call_id", "name", "arguments", "is_error", "error", "tool_use_id")
}))
shaped_records = st.fixed_dictionaries({}, optional={
    key: json_values | st.lists(shaped, max_size=4)
    for key in ("messages", "items", "input", "output", "tools", "system", "instructions",
                "metadata", "id")
})


# The `source` fixture is only read (for its content hash), so sharing it across examples is safe.
@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(record=shaped_records | json_values)
@example(record={"messages": [{"role": "user", "content": [{"type": []}]}]})
@example(record={"items": [{"type": [1]}]})
@example(record={"system": "s", "messages": [{"role": "assistant", "content": [{"type": {}}]}]})
def test_adapters_map_or_quarantine_any_json(source: Source, record) -> None:
    for module in (openai_chat, anthropic, openai_responses):
        try:
            episode = module.to_episode(record, source, 1)
        except RecordError as exc:
            assert str(exc) and "\n" not in str(exc)
        else:
            assert isinstance(episode["steps"], list)
            assert all(isinstance(step, dict) and "kind" in step for step in episode["steps"])
            assert episode["episode_id"] is not None
