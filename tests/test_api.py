"""The public API a notebook user finds: `import tracelab`, then methods on the store.

Each method is called on the sample traces and its result checked against what the CLI's
library calls give; `tracelab/__init__` re-exports exactly `__all__`, and internals stay out.
"""
from __future__ import annotations

import inspect
import typing
from pathlib import Path

import polars as pl
import pytest

import tracelab
from tests.conftest import REPO
from tracelab.errors import UsageError

SUITE = REPO / "sample_traces" / "suite.yaml"
METHODS = ("ingest", "sql", "effects", "check", "cover", "lint", "show", "view")


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    with tracelab.open_store(tmp_path_factory.mktemp("api") / "s.duckdb") as opened:
        opened.ingest([REPO / "sample_traces" / "native", REPO / "sample_traces" / "otlp"])
        yield opened


def test_the_root_exports_the_api_and_nothing_else():
    assert sorted(tracelab.__all__) == ["Store", "__version__", "load_suite", "open_store"]
    for name in tracelab.__all__:
        assert getattr(tracelab, name) is not None
    with pytest.raises(AttributeError):
        tracelab.check  # noqa: B018 (a check is a method of the store)
    assert not hasattr(tracelab.Store, "seal") and not hasattr(tracelab.Store, "verify")


@pytest.mark.parametrize("name", METHODS)
def test_every_method_is_typed_and_documented(name):
    member = getattr(tracelab.Store, name)
    function = member.fget if isinstance(member, property) else member
    hints = typing.get_type_hints(function, globalns=vars(inspect.getmodule(function)) | _type_names())
    assert "return" in hints
    assert [p for p in inspect.signature(function).parameters if p != "self" and p not in hints] == []
    assert function.__doc__ and function.__doc__.strip()


def _type_names() -> dict[str, object]:
    """The names the API's annotations use only for type checking."""
    from tracelab.ingest.batches import FileReport, IngestReport
    from tracelab.ingest.inputs import Input
    from tracelab.results.check import CheckRun
    from tracelab.results.cover import Coverage
    from tracelab.store.effects import Effects
    from tracelab.view import Report
    from tracelab.view.show import Run

    return {"pl": pl, "CheckRun": CheckRun, "Coverage": Coverage, "Report": Report, "Run": Run,
            "Effects": Effects, "IngestReport": IngestReport, "FileReport": FileReport, "Input": Input}


def test_load_suite_is_the_suite_loader():
    suite = tracelab.load_suite(SUITE)
    assert suite.name and len(suite.cases) > 1


def test_sql_and_effects(store):
    assert store.sql("SELECT count(*) AS n FROM episodes")["n"].item() > 0
    store.effects.set({"lookup_*": "read"})
    assert store.effects.list()["pattern"].to_list() == ["lookup_*"]


def test_check_cover_lint_show_and_view(store, tmp_path):
    from tracelab.results.check import check

    run = store.check(SUITE)
    assert run.saved and not run.passed  # the sample suite fails some cases on purpose
    assert run.result.verdicts.equals(check(store, SUITE, save=False).result.verdicts)

    coverage = store.cover(SUITE)
    assert coverage.table.height == len(coverage.table.unique(["case_id", "assertion_id"])) > 0
    assert set(coverage.table["status"]) <= {"never_exercised", "no_runs", "rarely_exercised", "exercised"}

    findings = store.lint(SUITE)
    assert findings.columns == ["kind", "refused", "case_id", "assertion_id", "reason"]
    assert "never_exercised" in findings["kind"].to_list()

    failing = run.result.verdicts.filter(~pl.col("passed"))["episode_id"][0]
    shown = store.show(failing, run.run_id)
    assert shown.episode_id == failing and shown.failures

    report = store.view(tmp_path / "report.html", run.run_id)
    assert report.run_id == run.run_id
    html = Path(tmp_path / "report.html").read_text(encoding="utf-8")
    assert html.startswith("<!doctype html>") and run.run_id in html
    with pytest.raises(UsageError):
        store.show("no-such-run")
