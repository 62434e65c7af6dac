"""Ingest rules that must not depend on how a file is cut into SQL batches, and §5 details of
staging: repeated episode ids, --replace, the first definition's effect, step reasons."""
from __future__ import annotations

import threading

import duckdb
import pytest

import tracelab.ingest.batches as ingest_batches
import tracelab.ingest.staging as ingest_staging
from tests.conftest import episode

REPEATS = [
    episode("a", agent="1"),  # line 1: added
    episode("b"),             # line 2: added
    episode("a", agent="1"),  # line 3: identical to line 1: skipped
    episode("a", agent="2"),  # line 4: differs from line 1: quarantined
    episode("c"),             # line 5: added
    episode("b", agent="x"),  # line 6: differs from line 2: quarantined
]


def quarantine(store) -> list[tuple]:
    return store.sql("SELECT line, reason FROM quarantine ORDER BY line").rows()


@pytest.mark.parametrize("batch_records", [1, 2, 20_000])
def test_repeated_ids_name_their_first_line_whatever_the_batches(store, write_jsonl, monkeypatch,
                                                                 batch_records):
    monkeypatch.setattr(ingest_batches, "BATCH_RECORDS", batch_records)

    report = store.ingest([write_jsonl(REPEATS)])

    assert (report.added, report.skipped, report.quarantined) == (3, 1, 2)
    assert quarantine(store) == [
        (4, "episode_id 'a' appears earlier in this file (line 1) with different content"),
        (6, "episode_id 'b' appears earlier in this file (line 2) with different content"),
    ]
    assert store.sql("SELECT episode_id, agent, source_line FROM episodes ORDER BY 1").rows() == [
        ("a", "1", 1), ("b", None, 2), ("c", None, 5)]


@pytest.mark.parametrize("batch_records", [1, 20_000])
def test_replace_compares_each_repeat_with_what_is_stored_by_then(store, write_jsonl, monkeypatch,
                                                                  batch_records):
    monkeypatch.setattr(ingest_batches, "BATCH_RECORDS", batch_records)
    store.ingest([write_jsonl([episode("a", agent="1")], "first.jsonl")])
    later = write_jsonl([episode("a", agent="1"),   # same as stored: skipped, nothing replaced yet
                         episode("a", agent="2"),   # replaces it
                         episode("a", agent="1"),   # differs from line 2, now stored: quarantined
                         episode("a", agent="2")],  # same as line 2: skipped
                        "later.jsonl")

    report = store.ingest([later], replace=True)

    assert (report.added, report.skipped, report.quarantined) == (1, 2, 1)
    assert store.sql("SELECT agent, source_line FROM episodes").rows() == [("2", 2)]
    assert quarantine(store) == [
        (3, "episode_id 'a' appears earlier in this file (line 2) with different content")]


def test_a_call_takes_the_effect_of_the_first_definition_even_when_it_has_none(store, write_jsonl):
    path = write_jsonl([episode("e", {"kind": "tool_call", "name": "x"},
                                tools=[{"name": "x"}, {"name": "x", "effect": "write"}])])

    store.ingest([path])

    assert store.sql("SELECT tool_name, effect FROM tool_calls").rows() == [("x", None)]


@pytest.mark.parametrize(
    ("steps", "reason"),
    [
        ('["user"]', "steps[0]: a step must be an object, not a string"),
        ('[{"kind": "user"}, null]', "steps[1]: a step must be an object, not null"),
        ('[{"kind": "user"}, [1]]', "steps[1]: a step must be an object, not an array"),
        ('[{"kind": "user"}, 2.5]', "steps[1]: a step must be an object, not a number"),
        ('[{"kind": {"a": 1}}]', "steps[0]: kind must be a string, not an object"),
        ('[{"kind": null}]', "steps[0]: missing kind"),
    ],
)
def test_step_reasons_name_the_json_type(store, write_jsonl, steps, reason):
    store.ingest([write_jsonl([episode("good"), f'{{"episode_id": "x", "steps": {steps}}}'])])

    assert quarantine(store) == [(2, reason)]


def test_budget_data_holds_the_keys_it_has_null_included(store, write_jsonl):
    path = write_jsonl([episode("b", {"kind": "budget", "steps_used": None, "tokens_used": 5},
                                {"kind": "budget", "steps_used": 2}, {"kind": "budget"})])

    store.ingest([path])

    assert store.sql("SELECT data FROM steps ORDER BY idx").rows() == [
        ('{"steps_used":null,"tokens_used":5}',), ('{"steps_used":2}',), (None,)]


# -- steps staged ahead (tracelab.ingest.pipeline._Stager) ---------------------------------------------


def databases(store) -> set[str]:
    return {row[0] for row in store.con.execute("SELECT database_name FROM duckdb_databases()").fetchall()}


def test_the_reading_thread_stages_each_batchs_steps_and_the_ingest_leaves_nothing_behind(
        store, write_jsonl, monkeypatch):
    monkeypatch.setattr(ingest_batches, "BATCH_RECORDS", 2)  # three batches
    staged_by = []
    real = ingest_staging.Stager.stage

    def stage(self, batch):
        staged_by.append(threading.current_thread().name)
        real(self, batch)

    monkeypatch.setattr(ingest_staging.Stager, "stage", stage)
    before = databases(store)

    report = store.ingest([write_jsonl([episode(f"e{i}", {"kind": "user", "text": str(i)}) for i in range(6)])])

    assert report.added == 6
    assert staged_by == ["tracelab-read"] * 3  # the writer staged none itself
    assert store.sql("SELECT count(*) FROM steps").item() == 6
    assert databases(store) == before  # the staging database is gone with its staged steps


def test_a_batch_the_reading_thread_could_not_stage_is_staged_by_the_writer(store, write_jsonl, monkeypatch):
    monkeypatch.setattr(ingest_batches, "BATCH_RECORDS", 2)
    real = ingest_staging.Stager.stage

    def stage(self, batch):
        if threading.current_thread().name == "tracelab-read":
            real(self, batch)  # its schema is made, then the statement fails: dropped again
            raise duckdb.OutOfMemoryException("Out of Memory Error: could not allocate block")
        real(self, batch)

    monkeypatch.setattr(ingest_staging.Stager, "stage", stage)
    rows = [episode("a", {"kind": "tool_call", "name": "t", "call_id": "1"},
                    {"kind": "tool_result", "call_id": "1", "text": "ok"}),
            episode("b", {"kind": "sneeze"}),  # quarantined for its step
            episode("c")]

    report = store.ingest([write_jsonl(rows)])

    assert (report.added, report.quarantined) == (2, 1)
    assert quarantine(store) == [(2, "steps[0]: unknown kind \"sneeze\"")]
    assert store.sql("SELECT episode_id, call_step_idx, result_step_idx, status FROM tool_calls").rows() == [
        ("a", 0, 1, "ok")]
    assert store.con.execute(f"SELECT count(*) FROM duckdb_schemas() WHERE database_name LIKE "
                             f"'{ingest_staging.STAGING_DB}%'").fetchone()[0] == 0
