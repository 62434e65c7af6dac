"""A suite parsed by libyaml (documents._FastLineLoader) reads as PyYAML's own parser reads it:
the same values, lines and source text, and, for a file either refuses, PyYAML's message."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import REPO
from tracelab import documents
from tracelab.documents import Map, Seq, read_document
from tracelab.errors import SuiteError

YAML_FILES = sorted(p for p in REPO.rglob("*.yaml") if not {".venv", "work", ".git"} & set(p.relative_to(REPO).parts))

pytestmark = pytest.mark.skipif(documents._FastLineLoader is None, reason="PyYAML was built without libyaml")


def _shape(value):
    """The value with the lines and source text the loader recorded, comparable as plain data."""
    if isinstance(value, Map):
        return ("map", value.line, [(k, value.lines.get(k), value.raw.get(k), _shape(v)) for k, v in value.items()])
    if isinstance(value, Seq):
        items = zip(value.lines, value.raw, value, strict=True)
        return ("seq", value.line, [(line, raw, _shape(v)) for line, raw, v in items])
    return value


def _read(path: Path, fast: bool, monkeypatch: pytest.MonkeyPatch):
    with monkeypatch.context() as patched:
        if not fast:
            patched.setattr(documents, "_FastLineLoader", None)
        try:
            return _shape(read_document(path).data)
        except SuiteError as exc:
            return ("refused", str(exc))


def test_the_repository_has_yaml_files_to_compare():
    assert len(YAML_FILES) >= 5


@pytest.mark.parametrize("path", YAML_FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_libyaml_reads_each_file_as_pyyaml_does(path, monkeypatch):
    assert _read(path, True, monkeypatch) == _read(path, False, monkeypatch)


@pytest.mark.parametrize("text", [
    "a: 1\na: 2\n",                      # a repeated key
    "a: [1, 2\n",                        # unclosed flow sequence
    "a: \x07\n",                         # a control character
    "x: &a [*a]\n",                      # an alias inside its own anchor
    "a:\n  - b: 1\n   c: 2\n",           # bad indentation
    "",                                  # empty
    "k: \u2028v\n",                      # a Unicode line separator
    "base: &b {x: 1}\nmore:\n  <<: *b\n  y: 2\n",
])
def test_refusals_and_edge_cases_read_alike(tmp_path, monkeypatch, text):
    path = tmp_path / "s.yaml"
    path.write_text(text, encoding="utf-8")
    assert _read(path, True, monkeypatch) == _read(path, False, monkeypatch)
