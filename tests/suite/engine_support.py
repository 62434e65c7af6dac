"""Helpers for the engine tests: ingest hand-written native episodes, check a YAML suite.

`Checker` keeps one store per test. `check(cases_yaml)` writes a suite whose
head declares one harmless default leak needle (so every case is valid), loads
it with the real loader and evaluates it. `verdicts(result, id)` gives, per
run, (passed, exercised, reason) of one assertion, so a test reads as a table.
"""
from __future__ import annotations

import itertools
import json
import textwrap
from pathlib import Path
from typing import Any

from tracelab.engine.evaluate import evaluate
from tracelab.engine.verdicts import CheckResult
from tracelab.store import Store
from tracelab.suite import load_suite

HEAD = """\
suite: engine-test
min_cases: 1
defaults:
  must_not_leak: [never-leaked-needle]
"""

Verdict = tuple[bool, str, str | None]


class Checker:
    """One store and one suite folder; episodes are ingested before each check."""

    def __init__(self, store: Store, folder: Path) -> None:
        self.store = store
        self.folder = folder
        self._files = itertools.count()

    def ingest(self, *episodes: dict[str, Any]) -> None:
        """Write the episodes as one JSONL file and ingest it; every one must load."""
        path = self.folder / f"traces{next(self._files)}.jsonl"
        path.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in episodes),
                        encoding="utf-8")
        report = self.store.ingest([path])
        assert [f.quarantined for f in report.files] == [0], report

    def suite_path(self, cases: str, head: str = "") -> Path:
        """Write HEAD, `head` (top-level keys) and `cases` (a YAML list) as a suite file."""
        path = self.folder / f"suite{next(self._files)}.yaml"
        text = HEAD + textwrap.dedent(head).lstrip("\n") + "cases:\n"
        path.write_text(text + textwrap.dedent(cases).lstrip("\n"), encoding="utf-8")
        return path

    def check(self, cases: str, head: str = "", **options: Any) -> CheckResult:
        """Load the suite and evaluate it over the store."""
        return evaluate(self.store.con, load_suite(self.suite_path(cases, head)), **options)


def verdicts(result: CheckResult, assertion_id: str, case_id: str | None = None
             ) -> dict[str, Verdict]:
    """episode_id -> (passed, exercised, reason) of one assertion (of one case, if given)."""
    rows = result.verdicts.filter(result.verdicts["assertion_id"] == assertion_id)
    if case_id is not None:
        rows = rows.filter(rows["case_id"] == case_id)
    out = {r["episode_id"]: (r["passed"], r["exercised"], r["reason"])
           for r in rows.iter_rows(named=True)}
    assert len(out) == rows.height, "one row per run expected"
    return out


def ep(episode_id: str, *steps: dict[str, Any], case: str = "c", **fields: Any) -> dict[str, Any]:
    """A native episode of case `case` (pass case=None for none)."""
    record: dict[str, Any] = {"episode_id": episode_id, **fields, "steps": list(steps)}
    if case is not None:
        record["case_id"] = case
    return record


def call(name: str | None, args: Any = None, *, status: str | None = "ok",
         call_id: str | None = None, effect: str | None = None, error: str | None = None
         ) -> list[dict[str, Any]]:
    """A tool_call step and (unless status is None) its tool_result step."""
    step: dict[str, Any] = {"kind": "tool_call", "name": name}
    if args is not None:
        step["args"] = args
    if call_id is not None:
        step["call_id"] = call_id
    if effect is not None:
        step["effect"] = effect
    if status is None:
        return [step]
    result: dict[str, Any] = {"kind": "tool_result", "status": status}
    if call_id is not None:
        result["call_id"] = call_id
    if error is not None:
        result["error"] = error
    return [step, result]


def calls(*specs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Flatten call() results into one list of steps."""
    return [step for spec in specs for step in spec]
