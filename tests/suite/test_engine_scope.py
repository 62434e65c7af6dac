"""The family queries read the selected runs' rows through chk_*_in (engine/evaluate._scope): the
tables, the tables filtered, or a copy of the selected runs' rows. Each gives the same verdicts."""
from __future__ import annotations

import pytest

import tracelab.engine.evaluate as evaluate
from tests.conftest import REPO
from tracelab.results.check import check
from tracelab.store import open_store

NATIVE = REPO / "sample_traces" / "native"
SUITE = REPO / "sample_traces" / "suite.yaml"


def _rows(run) -> list[tuple]:
    return sorted(run.verdicts.rows(), key=repr)


@pytest.mark.parametrize("share", [0.0, 1.0])
def test_an_incremental_check_gives_the_full_checks_verdicts_whichever_scope(tmp_path, monkeypatch, share):
    # share 1.0: the few new runs' rows are copied (_scoped_copied.sql); 0.0: read through the
    # filtered tables (_scoped.sql); the full check reads the tables themselves (_scoped_all.sql)
    scopes: list[str] = []
    load, run = evaluate.load_sql, evaluate.run_script

    def note(name: str) -> None:
        if name.startswith("engine/assertions/_scoped"):
            scopes.append(name.rsplit("/", 1)[1])

    def loaded(name: str) -> str:
        note(name)
        return load(name)

    def ran(con, name: str, params=None) -> None:
        note(name)
        run(con, name, params)

    monkeypatch.setattr(evaluate, "COPIED_SHARE", share)
    monkeypatch.setattr(evaluate, "load_sql", loaded)
    monkeypatch.setattr(evaluate, "run_script", ran)
    with open_store(tmp_path / "s.duckdb") as store:
        store.ingest([NATIVE / "shifts.jsonl", NATIVE / "banking.jsonl", NATIVE / "support.jsonl"])
        first = check(store, SUITE)
        store.ingest([NATIVE / "edge_cases.jsonl"])
        incremental = check(store, SUITE, since=first.run_id)
        full = check(store, SUITE, save=False)
    assert scopes == ["_scoped_all", "_scoped_copied" if share else "_scoped", "_scoped_all"]
    assert _rows(incremental) == _rows(full)
    assert incremental.result.summary == full.result.summary
