"""Failure location (docs/cli.md §6): a failed must_not_leak result names
the step of the first fragment holding the string, never its text, in check_results, JSON,
JUnit and text; NULL when the string is only in the run's output."""
from __future__ import annotations

import json

import duckdb
import pytest

from tests.conftest import episode
from tests.reliability.support import run_cli
from tracelab.results.check import check
from tracelab.store import open_store

SECRET = "Zebra-7741"
RUNS = [
    # the tool result (step 2) holds it first, the assistant (step 3) repeats it
    episode("in-result", {"kind": "user", "text": "config?"},
            {"kind": "tool_call", "name": "get_config", "call_id": "c1", "args": {"service": "billing"}},
            {"kind": "tool_result", "call_id": "c1", "text": f"key={SECRET}"},
            {"kind": "assistant", "text": f"It is {SECRET}"}, output="done", case_id="c"),
    # in a call's args (step 1), lower-cased: matching is case-insensitive
    episode("in-args", {"kind": "user", "text": "mail it"},
            {"kind": "tool_call", "name": "send_email", "call_id": "c2", "args": {"body": SECRET.lower()}},
            {"kind": "tool_result", "call_id": "c2", "text": "sent"}, output="sent", case_id="c"),
    # only in the output: the run as a whole
    episode("in-output", {"kind": "user", "text": "tell me"}, output=f"here: {SECRET}", case_id="c"),
    episode("clean", {"kind": "user", "text": "hello"}, output="Hi!", case_id="c"),
]
SUITE = f"""\
suite: locate
min_cases: 1
cases:
  - id: c
    expect:
      must_not_leak: ["{SECRET}"]
"""


@pytest.fixture
def checked(tmp_path, write_jsonl):
    suite = tmp_path / "suite.yaml"
    suite.write_text(SUITE)
    store_path = tmp_path / "s.duckdb"
    with open_store(store_path) as store:
        store.ingest([write_jsonl(RUNS)])
    return suite, store_path


def leak_steps(frame) -> dict[str, int | None]:
    rows = frame.filter(frame["assertion_type"] == "must_not_leak")
    return {r["episode_id"]: r["step_idx"] for r in rows.iter_rows(named=True)}


def test_a_leak_is_located_at_its_first_step(checked):
    suite, store_path = checked
    run = check(store_path, suite)
    assert leak_steps(run.verdicts) == {"in-result": 2, "in-args": 1, "in-output": None, "clean": None}
    with open_store(store_path, read_only=True) as store:
        saved = store.sql("SELECT episode_id, assertion_type, step_idx FROM check_results WHERE run_id = ?",
                          [run.run_id])
    assert leak_steps(saved) == leak_steps(run.verdicts)


def test_json_junit_and_text_name_the_step(checked):
    suite, store_path = checked
    code, out, _ = run_cli("check", str(suite), "--store", str(store_path), "--format", "json")
    assert code == 1
    located = {r["episode_id"]: r["step_idx"] for r in json.loads(out)["results"]}
    assert located == {"in-result": 2, "in-args": 1, "in-output": None}
    code, out, _ = run_cli("check", str(suite), "--store", str(store_path))
    assert "in-result step 2  must_not_leak[0]  LEAKED" in out
    assert "in-args step 1  must_not_leak[0]" in out
    assert "in-output  must_not_leak[0]" in out
    code, out, _ = run_cli("check", str(suite), "--store", str(store_path), "--format", "junit")
    assert "in-result step 2  must_not_leak[0]" in out
    for output in (out,):
        assert f"key={SECRET}" not in output and "It is" not in output


def test_a_store_saved_before_step_idx_still_opens(checked):
    suite, store_path = checked
    check(store_path, suite)
    with duckdb.connect(str(store_path)) as con:  # as an earlier tracelab wrote it: every row in a table
        con.execute("CREATE TABLE rows_kept AS SELECT * EXCLUDE (step_idx) FROM check_results")
        con.execute("DROP VIEW check_results")
        con.execute("DROP TABLE check_selected")
        con.execute("DROP TABLE check_exceptions")
        con.execute("ALTER TABLE rows_kept RENAME TO check_results")
        con.execute("ALTER TABLE check_runs DROP COLUMN failed_cases")
    code, out, err = run_cli("show", "in-result", "--store", str(store_path), "--check", "latest")
    assert (code, err) == (0, "")
    assert "must_not_leak[0]" in out
    code, _, err = run_cli("view", "--store", str(store_path), "-o", str(store_path.parent / "r.html"))
    assert (code, err) == (0, "")
    with open_store(store_path) as store:  # read-write: the rows move to the view, the column added back
        assert store.sql("SELECT count(step_idx) AS n FROM check_results")["n"].item() == 0
    run = check(store_path, suite)
    assert leak_steps(run.verdicts)["in-result"] == 2
