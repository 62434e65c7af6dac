"""Acceptance on real benchmark outputs: everything ingests with --format auto, nothing valid is
quarantined, and per source the episode, tool-call, tool-error and unanswered-call counts equal
numbers computed here from the original files with plain `json` (never through tracelab).

The files live outside the repo (/work/shared/real_traces, see each folder's SOURCE.txt); the
module is skipped when they are absent.
"""
from __future__ import annotations

import json
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tracelab.store import Store, open_store

REAL = Path(__file__).resolve().parents[2] / ".." / "shared" / "real_traces"

pytestmark = pytest.mark.skipif(
    not REAL.is_dir(), reason=f"real benchmark traces not present at {REAL.resolve()}"
)

FOLDER_FORMATS = {
    "tau_bench_airline_gpt4o": "tau-bench",
    "agentdojo_invariant_export": "agentdojo",
    "swe_agent_traj": "swe-agent",
    "openhands_multi_swe_bench": "openhands",
    "inspect_ai_logs": "inspect",
    "coding_agents": None,  # <format>/<repository>/...: read by the format it is filed under
}
TRACE_SUFFIXES = {".json", ".jsonl", ".traj", ".eval"}
SWE_REJECTED_EDIT = "Your proposed edit has introduced new syntax error(s)"


@dataclass(frozen=True)
class Counts:
    """What one source holds: episodes, tool calls, calls whose result is an error, and calls
    with no recorded result."""

    episodes: int
    calls: int
    errors: int
    missing: int


# -- independent counts from the original files ----------------------------------------------


def _chat_counts(conversations: list[list[dict[str, Any]]], failed) -> Counts:
    """Counts over OpenAI-style message lists; `failed(tool_message)` says which results failed."""
    calls = sum(len(m.get("tool_calls") or []) for c in conversations for m in c
                if m["role"] == "assistant")
    results = [m for c in conversations for m in c if m["role"] == "tool"]
    return Counts(len(conversations), calls, sum(1 for m in results if failed(m)),
                  calls - len(results))


def _jsonl(path: Path) -> Iterator[dict[str, Any]]:
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


def tau_bench_counts(folder: Path) -> Counts:
    runs = json.loads((folder / "gpt-4o-airline.json").read_text(encoding="utf-8"))
    return _chat_counts([run["traj"] for run in runs],
                        lambda m: m["content"].startswith("Error:"))


def agentdojo_counts(folder: Path) -> Counts:
    conversations = []
    for path in sorted(folder.glob("*.jsonl")):
        lines = list(_jsonl(path))
        assert set(lines[0]) == {"metadata"}, f"{path.name}: line 1 is the header"
        conversations += [record["messages"] for record in lines[1:]]
    return _chat_counts(conversations, lambda m: m.get("error") is not None)


def swe_agent_counts(folder: Path) -> Counts:
    episodes = calls = errors = results = 0
    for path in sorted(folder.rglob("*.traj")):
        traj = json.loads(path.read_text(encoding="utf-8"))
        episodes += 1
        if traj.get("trajectory"):
            observations = [entry["observation"] for entry in traj["trajectory"]]
            calls += len(traj["trajectory"])
        else:
            history = traj["history"]
            observations = [m["content"] for m in history if m["role"] == "tool"]
            calls += sum(1 for m in history if m["role"] == "assistant" and m.get("action"))
        results += len(observations)
        errors += sum(1 for text in observations if text.startswith(SWE_REJECTED_EDIT))
    return Counts(episodes, calls, errors, calls - results)


def openhands_counts(folder: Path) -> Counts:
    episodes = calls = errors = results = 0
    for record in _jsonl(folder / "output.jsonl"):
        episodes += 1
        for event in record["history"]:
            if not event.get("tool_call_metadata"):
                continue
            if "action" in event:
                calls += 1
            else:
                results += 1
                errors += (event.get("success") is False or event["observation"] == "error"
                           or event["content"].startswith("ERROR:"))
    return Counts(episodes, calls, errors, calls - results)


def inspect_counts(folder: Path) -> Counts:
    samples = []
    for path in sorted(folder.rglob("*.json")):
        samples += json.loads(path.read_text(encoding="utf-8")).get("samples") or []
    for path in sorted(folder.rglob("*.eval")):
        with zipfile.ZipFile(path) as archive:
            samples += [json.loads(archive.read(name)) for name in archive.namelist()
                        if name.startswith("samples/") and name.endswith(".json")]
    return _chat_counts([s["messages"] for s in samples], lambda m: m.get("error") is not None)


EXPECTED = {
    "tau_bench_airline_gpt4o": tau_bench_counts,
    "agentdojo_invariant_export": agentdojo_counts,
    "swe_agent_traj": swe_agent_counts,
    "openhands_multi_swe_bench": openhands_counts,
    "inspect_ai_logs": inspect_counts,
}


# -- one ingest of everything ----------------------------------------------------------------


@pytest.fixture(scope="module")
def ingested(tmp_path_factory) -> Iterator[tuple[Store, Any]]:
    with open_store(tmp_path_factory.mktemp("real") / "store.duckdb") as store:
        report = store.ingest([REAL], format="auto")
        yield store, report


def _folder(uri: str) -> str:
    return Path(uri).resolve().relative_to(REAL.resolve()).parts[0]


def _folder_format(uri: str) -> str:
    parts = Path(uri).resolve().relative_to(REAL.resolve()).parts
    return FOLDER_FORMATS[parts[0]] or parts[1]


def test_nothing_is_quarantined(ingested) -> None:
    store, report = ingested
    assert report.quarantined == 0
    assert store.sql("SELECT source_uri, line, reason FROM quarantine").rows() == []
    assert report.failed == []


def test_only_notes_licenses_and_the_derived_tool_schema_are_not_traces(ingested) -> None:
    _, report = ingested
    files = [Path(f.path) for f in report.files]
    expected = sorted(str(p) for p in files
                      if p.suffix not in TRACE_SUFFIXES or p.name.startswith("DERIVED_"))
    assert sorted(f.path for f in report.files if f.status == "not-a-trace") == expected
    assert any(p.endswith("DERIVED_airline_tools_schema.json") for p in expected)


def test_every_trace_file_is_read_by_its_folders_format(ingested) -> None:
    _, report = ingested
    loaded = [f for f in report.files if f.status != "not-a-trace"]
    assert {f.status for f in loaded} == {"loaded"}
    assert [(f.path, f.format) for f in loaded] == [
        (f.path, _folder_format(f.path)) for f in loaded]
    assert {_folder(f.path) for f in loaded} == set(FOLDER_FORMATS)


@pytest.mark.parametrize("folder", sorted(EXPECTED))
def test_counts_match_the_original_files(ingested, folder: str) -> None:
    store, _ = ingested
    expected = EXPECTED[folder](REAL / folder)
    prefix = {"prefix": f"{REAL / folder}/"}  # source_uri is the path as ingest was given it
    episodes = store.sql(
        "SELECT count(*) FROM episodes WHERE starts_with(source_uri, $prefix)", prefix).item()
    calls, errors, missing = store.sql(
        "SELECT count(*), count(*) FILTER (WHERE t.status = 'error'),"
        " count(*) FILTER (WHERE t.status = 'missing')"
        " FROM tool_calls t JOIN episodes e USING (episode_id)"
        " WHERE starts_with(e.source_uri, $prefix)", prefix).row(0)
    assert Counts(episodes, calls, errors, missing) == expected
