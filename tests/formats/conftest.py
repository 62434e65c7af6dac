"""Fixtures for adapter tests (the store and `write_jsonl` come from tests/conftest.py)."""
from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest

from tracelab.formats.base import Quarantined
from tracelab.formats.source import Source

Item = tuple[int, dict[str, Any]] | Quarantined


@pytest.fixture
def adapt(write_jsonl: Callable[..., Any]) -> Callable[..., list[Item]]:
    """``adapt(module, *records)``: what `module.episodes` yields for a file of those records.

    The file is ``traces.jsonl`` in the test's temporary folder, one record per line.
    """

    def run(module: ModuleType, *records: Any) -> list[Item]:
        return list(module.episodes(Source(write_jsonl(list(records)))))

    return run
