"""Fixtures for adapter tests: write records to a file, run an adapter on it, open a store."""
from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tracelab.formats.base import Quarantined, Source
from tracelab.store import Store, open_store


@pytest.fixture
def write_jsonl(tmp_path: Path) -> Callable[..., Path]:
    """``write_jsonl(records, name="t.jsonl")``: a JSON Lines file, one record per line.

    A `str` record is written as is (for blank or broken lines).
    """

    def write(records: list[Any], name: str = "t.jsonl") -> Path:
        path = tmp_path / name
        path.write_text(
            "".join((r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n"
                    for r in records),
            encoding="utf-8",
        )
        return path

    return write


@pytest.fixture
def adapt(write_jsonl) -> Callable[..., list[tuple[int, dict[str, Any]] | Quarantined]]:
    """``adapt(module, *records)``: what `module.episodes` yields for a file of those records."""

    def run(module: ModuleType, *records: Any) -> list[tuple[int, dict[str, Any]] | Quarantined]:
        return list(module.episodes(Source(write_jsonl(list(records)))))

    return run


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """A fresh DuckDB store in a temporary folder."""
    with open_store(tmp_path / "store.duckdb") as opened:
        yield opened
