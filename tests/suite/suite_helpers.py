"""Helpers for suite tests: write a small suite into tmp_path, load it, capture refusals."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tracelab.errors import SuiteError
from tracelab.suite import Suite, load_suite

FIXTURES = Path(__file__).resolve().parent / "fixtures"

# Five lines; the first case written after it starts on line 6.
HEAD = """\
suite: demo
min_cases: 1
defaults:
  must_not_leak: [sk-live-]
cases:
"""


def write(folder: Path, text: str, name: str = "suite.yaml") -> Path:
    """Write dedented `text` as a suite file and return its path."""
    path = folder / name
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def load(folder: Path, cases: str, name: str = "suite.yaml") -> Suite:
    """Load HEAD followed by `cases` (a dedented YAML list of cases)."""
    return load_suite(write(folder, HEAD + textwrap.dedent(cases).lstrip("\n"), name))


def refusal(path: Path) -> str:
    """The one-line message of the SuiteError loading `path` raises."""
    with pytest.raises(SuiteError) as info:
        load_suite(path)
    message = str(info.value)
    assert "\n" not in message
    return message


def refused(folder: Path, cases: str) -> str:
    """The message refusing HEAD followed by `cases`."""
    return refusal(write(folder, HEAD + textwrap.dedent(cases).lstrip("\n")))
