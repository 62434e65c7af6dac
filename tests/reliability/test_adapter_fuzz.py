"""Every input format, forced on mutated copies of its sample file, gives a clean report: the
records land or are quarantined with a one-line reason, and nothing raises.

The adapters' own property tests call their mapping functions directly; this one goes
through `store.ingest([...], format=NAME)`, so ingest's validation and SQL see the output.
"""
from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import REPO
from tests.reliability.support import account, encode, json_values, mutated_bytes, mutated_json
from tracelab.formats import all_formats
from tracelab.store import open_store

SAMPLES = REPO / "sample_traces"


def sample(name: str) -> Path:
    """The first sample file (in name order) of the format `name`."""
    return sorted(p for p in (SAMPLES / name).rglob("*") if p.is_file())[0]


def records(path: Path) -> tuple[list[tuple[bytes, Any]], bool]:
    """The file's records as (bytes, parsed JSON or None when a sample line is broken on
    purpose), and whether it is JSON Lines (else one document)."""
    data = path.read_bytes()
    try:
        return [(data, json.loads(data))], False
    except json.JSONDecodeError:
        return [(line, _parsed(line)) for line in data.splitlines() if line.strip()], True


def _parsed(line: bytes) -> Any:
    try:
        return json.loads(line)
    except json.JSONDecodeError:
        return None


@st.composite
def mutated_file(draw: st.DrawFn, items: list[tuple[bytes, Any]], lines: bool) -> bytes:
    """The sample with one of its records changed: a node of it replaced, removed or doubled,
    its bytes edited, or the whole record swapped for any JSON value."""
    at = draw(st.integers(0, len(items) - 1))
    raw, parsed = items[at]
    how = draw(st.sampled_from(["node", "node", "bytes", "value"]))
    out = [item for item, _ in items]
    if how == "node" and parsed is not None:
        out[at] = encode(draw(mutated_json(parsed)), draw(st.booleans()))
    elif how == "value":
        out[at] = encode(draw(json_values()), True)
    else:
        out[at] = draw(mutated_bytes(raw, newlines=not lines))
    return b"\n".join(out) + b"\n"


@pytest.mark.parametrize("module", all_formats(), ids=lambda m: m.name)
def test_every_format_reports_mutated_samples_cleanly(tmp_path, module):
    source = sample(module.name)
    items, lines = records(source)
    store = open_store(tmp_path / "store.duckdb")
    examples = itertools.count()

    @settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(content=mutated_file(items, lines))
    def check(content: bytes) -> None:
        path = tmp_path / f"m{next(examples)}{''.join(source.suffixes)}"
        path.write_bytes(content)

        [report] = store.ingest([path], format=module.name).files

        stored, held, reasons = account(store, path)
        assert report.status in ("loaded", "already-ingested", "failed")
        if report.status == "failed":
            assert report.message and "\n" not in report.message
            assert (stored, held) == ([], [])
        else:
            assert (len(stored), len(held)) == (report.added, report.quarantined)
            assert all(reason and "\n" not in reason for reason in reasons)

    try:
        check()
    finally:
        store.close()
