"""Shared fixtures: a fresh store and a writer of small JSONL trace files."""
from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tracelab.store import Store, open_store

REPO = Path(__file__).resolve().parents[1]
REAL_TRACES = REPO.parent / "shared" / "real_traces"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """An empty DuckDB store in a temporary folder."""
    with open_store(tmp_path / "store.duckdb") as opened:
        yield opened


@pytest.fixture
def write_jsonl(tmp_path: Path) -> Callable[..., Path]:
    """Write records (dicts, or raw strings written verbatim) as one line each; returns the path."""

    def write(records: list[Any], name: str = "traces.jsonl") -> Path:
        path = tmp_path / name
        lines = [r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in records]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return path

    return write


def episode(episode_id: str, *steps: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """A native episode with the given steps and fields."""
    return {"episode_id": episode_id, **fields, "steps": list(steps)}
