"""`check --since` never keeps verdicts computed under other tool effects, and with `--case` or
`--category` it reports only the selected cases (issue 29, "Wrong verdicts")."""
from __future__ import annotations

import json

import pytest

from tests.conftest import REPO
from tests.reliability.support import run_cli
from tracelab.errors import UsageError
from tracelab.results.check import check
from tracelab.store import open_store

NATIVE = REPO / "sample_traces" / "native"
SUITE = REPO / "sample_traces" / "suite.yaml"
EFFECTS = REPO / "sample_traces" / "effects.yaml"


@pytest.fixture
def checked(tmp_path):
    """A store of the native samples and the run id of a full saved check of them."""
    path = tmp_path / "s.duckdb"
    with open_store(path) as store:
        store.ingest(sorted(NATIVE.glob("[!b]*.jsonl")))  # every sample but bad_lines and banking
        first = check(store, SUITE)
    return path, first.run_id


@pytest.mark.parametrize("change", [
    lambda store: store.effects.load(EFFECTS),
    lambda store: store.effects.set({"assign_shift": "read"}),
    lambda store: store.effects.set({"*": "write"}),
])
def test_since_after_an_effects_change_is_refused(checked, change):
    path, run_id = checked
    with open_store(path) as store:
        change(store)
        with pytest.raises(UsageError, match=r"--since .*: the tool effects changed after that check"):
            check(store, SUITE, since=run_id)


def test_since_after_an_effects_unset_is_refused(tmp_path):
    with open_store(tmp_path / "s.duckdb") as store:
        store.ingest([NATIVE / "shifts.jsonl"])
        store.effects.set({"assign_shift": "read"})
        first = check(store, SUITE)
        store.effects.unset(["assign_shift"])
        with pytest.raises(UsageError, match="the tool effects changed after that check"):
            check(store, SUITE, since=first.run_id)


def test_since_refused_after_effects_import_on_the_command_line(checked):
    path, run_id = checked
    assert run_cli("effects", "import", str(EFFECTS), "--store", str(path))[0] == 0
    code, _out, err = run_cli("check", str(SUITE), "--since", run_id, "--store", str(path))
    assert code == 2
    assert len(err.strip().splitlines()) == 1
    assert "the tool effects changed after that check" in err and "run a full check" in err


def test_since_with_unchanged_effects_still_continues(tmp_path):
    with open_store(tmp_path / "s.duckdb") as store:
        store.effects.load(EFFECTS)
        store.ingest([NATIVE / "shifts.jsonl"])
        first = check(store, SUITE)
        store.ingest([NATIVE / "banking.jsonl"])
        incremental = check(store, SUITE, since=first.run_id)
        full = check(store, SUITE, save=False)
    assert incremental.result.summary == full.result.summary


@pytest.mark.parametrize("options", [["--case", "assign-shift"], ["--category", "writes"],
                                     ["--case", "money-movement", "--category", "permissions"]])
def test_since_with_case_or_category_reports_only_those_cases(checked, options):
    path, run_id = checked
    with open_store(path) as store:
        store.ingest([NATIVE / "banking.jsonl"])
    since = run_cli("check", str(SUITE), "--since", run_id, *options, "--format", "json",
                    "--all-results", "--store", str(path))
    full = run_cli("check", str(SUITE), *options, "--format", "json", "--all-results", "--no-save",
                   "--store", str(path))
    since_doc, full_doc = json.loads(since[1]), json.loads(full[1])
    assert since_doc["summary"] == full_doc["summary"]
    assert {c["id"] for c in since_doc["cases"]} == {c["id"] for c in full_doc["cases"]}
    assert {r["case"] for r in since_doc["results"]} <= {c["id"] for c in full_doc["cases"]}
    with open_store(path, read_only=True) as store:
        saved = store.sql("SELECT runs, cases FROM check_runs WHERE run_id = ?",
                          [since_doc["run_id"]]).row(0)
    assert saved == (full_doc["summary"]["runs"], [c["id"] for c in full_doc["cases"]])
