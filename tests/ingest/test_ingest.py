"""Native ingest: idempotency, --replace, pairing, statuses, effects, tools_declared, unicode."""
from __future__ import annotations

import gzip
import json

import pytest
import zstandard

from tests.conftest import episode


def counts(store) -> tuple[int, ...]:
    return tuple(
        store.sql(f"SELECT count(*) FROM {t}").item()
        for t in ("episodes", "steps", "tool_calls", "tool_definitions", "quarantine", "sources")
    )


def calls(store, episode_id: str) -> list[tuple]:
    return store.sql(
        "SELECT call_step_idx, result_step_idx, status FROM tool_calls WHERE episode_id = ? ORDER BY call_index",
        [episode_id],
    ).rows()


def test_reingesting_the_same_file_adds_nothing(store, write_jsonl):
    path = write_jsonl([episode("a", {"kind": "tool_call", "name": "t"}), "broken"])
    first = store.ingest([path])
    before = counts(store)

    again = store.ingest([path])

    assert (first.added, first.quarantined) == (1, 1)
    assert again.files[0].status == "already-ingested"
    assert (again.added, again.skipped, again.quarantined) == (0, 1, 0)
    assert counts(store) == before


def test_same_episode_in_another_file_is_skipped_and_a_changed_one_quarantined(store, write_jsonl):
    store.ingest([write_jsonl([episode("a", agent="x"), episode("b")], "one.jsonl")])

    report = store.ingest([write_jsonl([episode("a", agent="x"), episode("b", agent="changed")], "two.jsonl")])

    assert (report.added, report.skipped, report.quarantined) == (0, 1, 1)
    reason = store.sql("SELECT reason FROM quarantine").item()
    assert reason == "episode_id 'b' is already stored with different content (use --replace to replace it)"
    assert store.sql("SELECT agent FROM episodes WHERE episode_id = 'b'").item() is None


def test_replace_swaps_the_stored_episode_and_all_its_rows(store, write_jsonl):
    old = episode("b", {"kind": "tool_call", "name": "old"}, tools=[{"name": "old"}])
    store.ingest([write_jsonl([old], "1.jsonl")])

    report = store.ingest([write_jsonl([episode("b", {"kind": "user", "text": "new"}, agent="v2")], "2.jsonl")],
                          replace=True)

    assert (report.added, report.quarantined) == (1, 0)
    assert store.sql("SELECT agent, n_steps, tools_declared FROM episodes").rows() == [("v2", 1, False)]
    assert store.sql("SELECT count(*) FROM tool_calls").item() == 0
    assert store.sql("SELECT count(*) FROM tool_definitions").item() == 0
    assert store.sql("SELECT kind, text FROM steps").rows() == [("user", "new")]


def test_identical_content_means_canonical_json(store, write_jsonl):
    store.ingest([write_jsonl(['{"episode_id": "a", "reward": 1, "steps": [], "agent": "x"}'], "1.jsonl")])

    report = store.ingest([write_jsonl(['{"agent":"x","steps":[],"episode_id":"a","reward":1}',
                                        '{"agent":"x","steps":[],"episode_id":"a","reward":1.0}'], "2.jsonl")])

    # key order and whitespace do not matter; 1 and 1.0 differ
    assert (report.skipped, report.quarantined) == (1, 1)


def test_duplicate_within_one_file_keeps_the_first(store, write_jsonl):
    report = store.ingest([write_jsonl([episode("a", agent="first"), episode("a", agent="first"),
                                        episode("a", agent="second")])])

    assert (report.added, report.skipped, report.quarantined) == (1, 1, 1)
    assert store.sql("SELECT agent FROM episodes").item() == "first"
    assert "appears earlier in this file (line 1)" in store.sql("SELECT reason FROM quarantine").item()


CALL = "tool_call"
RESULT = "tool_result"


@pytest.mark.parametrize(
    ("steps", "expected"),
    [
        # unique ids: plain join, even when results come back out of order
        ([{"kind": CALL, "name": "a", "call_id": "1"}, {"kind": CALL, "name": "b", "call_id": "2"},
          {"kind": RESULT, "call_id": "2"}, {"kind": RESULT, "call_id": "1", "status": "error"}],
         [(0, 3, "error"), (1, 2, "ok")]),
        # reused ids pair with the earliest unpaired call of that id
        ([{"kind": CALL, "name": "a", "call_id": "x"}, {"kind": RESULT, "call_id": "x"},
          {"kind": CALL, "name": "a", "call_id": "x"}, {"kind": RESULT, "call_id": "x", "status": "denied"}],
         [(0, 1, "ok"), (2, 3, "denied")]),
        # empty ids mean none: the name decides, then order
        ([{"kind": CALL, "name": "a", "call_id": ""}, {"kind": CALL, "name": "b", "call_id": ""},
          {"kind": RESULT, "name": "b", "call_id": ""}, {"kind": RESULT, "call_id": ""}],
         [(0, 3, "ok"), (1, 2, "ok")]),
        # a result before any call pairs with nothing; a call without result is missing
        ([{"kind": RESULT, "text": "orphan"}, {"kind": CALL, "name": "a"}],
         [(1, None, "missing")]),
        # an unknown id falls back to the name rule, then to the earliest call
        ([{"kind": CALL, "name": "a", "call_id": "1"}, {"kind": CALL, "name": "b", "call_id": "2"},
          {"kind": RESULT, "call_id": "zzz", "name": "b"}, {"kind": RESULT, "call_id": "zzz"}],
         [(0, 3, "ok"), (1, 2, "ok")]),
        # a call carrying a different id stays eligible for the order rule
        ([{"kind": CALL, "name": "a", "call_id": "1"}, {"kind": RESULT, "call_id": "2"}],
         [(0, 1, "ok")]),
        # the name rule never matches a nameless call
        ([{"kind": CALL}, {"kind": CALL, "name": "b"}, {"kind": RESULT, "name": "c"}],
         [(0, 2, "ok"), (1, None, "missing")]),
        # a result only looks back: the id match after it does not count
        ([{"kind": CALL, "name": "a", "call_id": "1"}, {"kind": RESULT, "call_id": "2"},
          {"kind": CALL, "name": "b", "call_id": "2"}],
         [(0, 1, "ok"), (2, None, "missing")]),
        # is_error true -> error; only JSON true counts; explicit status wins
        ([{"kind": CALL, "call_id": "1"}, {"kind": RESULT, "call_id": "1", "is_error": True},
          {"kind": CALL, "call_id": "2"}, {"kind": RESULT, "call_id": "2", "is_error": "true"},
          {"kind": CALL, "call_id": "3"}, {"kind": RESULT, "call_id": "3", "is_error": True, "status": "denied"},
          {"kind": CALL, "call_id": "4"}, {"kind": RESULT, "call_id": "4", "status": ""}],
         [(0, 1, "error"), (2, 3, "ok"), (4, 5, "denied"), (6, 7, "ok")]),
    ],
)
def test_pairing_and_status(store, write_jsonl, steps, expected):
    store.ingest([write_jsonl([episode("p", *steps)])])

    assert calls(store, "p") == expected


def test_effect_resolution_and_result_text(store, write_jsonl):
    ep = episode(
        "e",
        {"kind": CALL, "name": "pay", "call_id": "1", "args": '{"to": "Ann", "amount": 5}'},
        {"kind": RESULT, "call_id": "1", "result": {"receipt": 9}},
        {"kind": CALL, "name": "lookup", "call_id": "2", "effect": "write", "args": "not json {"},
        {"kind": RESULT, "call_id": "2", "text": "found", "result": "ignored"},
        {"kind": CALL, "name": "other", "call_id": "3"},
        {"kind": RESULT, "call_id": "3", "result": "plain string"},
        tools=[{"name": "pay", "effect": "write"}, {"name": "lookup", "effect": "read"},
               {"name": "pay", "effect": "read"}],
    )
    store.ingest([write_jsonl([ep])])

    rows = store.sql(
        "SELECT tool_name, effect, args, args_text, result_text FROM tool_calls ORDER BY call_index").rows()
    assert rows == [
        ("pay", "write", '{"to":"Ann","amount":5}', '{"to": "Ann", "amount": 5}', '{"receipt":9}'),
        ("lookup", "write", None, "not json {", "found"),
        ("other", None, None, None, "plain string"),
    ]
    assert store.sql("SELECT data FROM steps WHERE idx = 2").item() == '"not json {"'


def test_tools_declared_absent_null_empty_and_listed(store, write_jsonl):
    store.ingest([write_jsonl([
        episode("absent"), episode("null", tools=None), episode("empty", tools=[]),
        episode("listed", tools=[{"name": "a"}, {"name": "b", "effect": "write"}]),
    ])])

    declared = dict(store.sql("SELECT episode_id, tools_declared FROM episodes").rows())
    assert declared == {"absent": False, "null": False, "empty": True, "listed": True}
    assert store.sql("SELECT episode_id, position, name FROM tool_definitions ORDER BY position").rows() == [
        ("listed", 0, "a"), ("listed", 1, "b")]
    avail = dict(store.sql("SELECT episode_id, availability FROM tool_availability('b')").rows())
    assert avail == {"absent": "unknown", "null": "unknown", "empty": "unavailable", "listed": "available"}


def test_zero_step_episode_and_n_steps(store, write_jsonl):
    store.ingest([write_jsonl([episode("zero"), episode("two", {"kind": "user"}, {"kind": "assistant"})])])

    assert dict(store.sql("SELECT episode_id, n_steps FROM episodes").rows()) == {"zero": 0, "two": 2}
    assert store.sql("SELECT count(*) FROM steps WHERE episode_id = 'zero'").item() == 0


def test_unicode_survives_and_lower_is_per_code_point(store, write_jsonl):
    text = "İstanbul ΣΟΦΊΑ 👍🏽 naïve"
    store.ingest([write_jsonl([episode("u", {"kind": "tool_call", "name": "note", "args": {"tëxt": text}},
                                       output=text)])])

    assert store.sql("SELECT output FROM episodes").item() == text
    hits = store.sql("SELECT DISTINCT origin FROM transcript WHERE contains(lower(text), lower(?)) ORDER BY 1",
                     ["σοφία"]).rows()
    assert hits == [("output",), ("step.data",)]
    keys = store.sql("SELECT text FROM transcript WHERE origin = 'step.data.key'").rows()
    assert keys == [("tëxt",)]


def test_transcript_fragments(store, write_jsonl):
    ep = episode(
        "t",
        {"kind": "tool_call", "name": "search", "args": {"q": "a\"b", "n": 3, "deep": {"ok": True}, "list": ["x", 1]}},
        {"kind": "tool_result", "error": "boom"},
        input="in", output="out", error="run failed", meta={"secret": "not-in-transcript"},
    )
    store.ingest([write_jsonl([ep])])

    fragments = sorted(store.sql("SELECT origin, text FROM transcript").rows())
    assert fragments == sorted([
        ("input", "in"), ("output", "out"), ("error", "run failed"),
        ("step.name", "search"), ("step.error", "boom"),
        ("step.data", 'a"b'), ("step.data", "3"), ("step.data", "true"), ("step.data", "x"), ("step.data", "1"),
        ("step.data.key", "q"), ("step.data.key", "n"), ("step.data.key", "deep"), ("step.data.key", "ok"),
        ("step.data.key", "list"),
    ])


def test_budget_data_holds_only_its_keys(store, write_jsonl):
    store.ingest([write_jsonl([episode("b", {"kind": "budget", "steps_used": 3},
                                       {"kind": "budget", "tokens_used": 10, "steps_used": None})])])

    assert store.sql("SELECT data FROM steps ORDER BY idx").rows() == [
        ('{"steps_used":3}',), ('{"steps_used":null,"tokens_used":10}',)]


@pytest.mark.parametrize("suffix", [".jsonl.gz", ".jsonl.zst"])
def test_compressed_files(store, tmp_path, suffix):
    data = (json.dumps(episode("c1")) + "\n" + json.dumps(episode("c2")) + "\n").encode()
    path = tmp_path / f"t{suffix}"
    path.write_bytes(gzip.compress(data) if suffix.endswith("gz") else zstandard.ZstdCompressor().compress(data))

    report = store.ingest([path])

    assert report.added == 2


def test_truncated_archive_loads_nothing_and_the_others_load(store, tmp_path, write_jsonl):
    data = "".join(json.dumps(episode(f"z{i}", {"kind": "user", "text": "x" * 200})) + "\n" for i in range(200))
    broken = tmp_path / "broken.jsonl.gz"
    broken.write_bytes(gzip.compress(data.encode())[:-40])
    good = write_jsonl([episode("fine")])

    report = store.ingest([broken, good])

    assert [f.status for f in report.files] == ["failed", "loaded"]
    assert "cannot be read to its end" in report.files[0].message
    assert store.sql("SELECT episode_id FROM episodes").rows() == [("fine",)]
    assert store.sql("SELECT count(*) FROM sources").item() == 1


def test_folders_are_read_recursively_in_code_point_order(store, tmp_path):
    (tmp_path / "d" / "B").mkdir(parents=True)
    for rel, eid in [("d/b.jsonl", "2"), ("d/B/z.jsonl", "1"), ("d/a.jsonl", "0")]:
        (tmp_path / rel).write_text(json.dumps(episode(eid)) + "\n")
    (tmp_path / "d" / "notes.txt").write_text("not a trace\n")

    report = store.ingest([tmp_path / "d"])

    assert [f.path.split("/d/")[1] for f in report.files] == ["B/z.jsonl", "a.jsonl", "b.jsonl", "notes.txt"]
    assert [f.status for f in report.files] == ["loaded", "loaded", "loaded", "not-a-trace"]
