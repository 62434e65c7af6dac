"""The library never reaches up: which modules may import what (STYLE: layout and habits).

Checked on the source (every import statement, lazy ones inside functions included) and,
for loading a suite, on what a fresh interpreter actually imports.
"""
from __future__ import annotations

import ast
import subprocess
import sys

import pytest

from tests.conftest import REPO

SRC = REPO / "src" / "tracelab"
MODULES = sorted(p for p in SRC.rglob("*.py") if "__pycache__" not in p.parts)


def imported(path) -> set[str]:
    """Every module `path` imports, at the top or inside a function."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def rel(path) -> str:
    return str(path.relative_to(SRC.parent))


@pytest.mark.parametrize("path", [p for p in MODULES if "cli" not in p.relative_to(SRC).parts[:1]],
                         ids=rel)
def test_the_library_never_imports_click(path):
    assert not {name for name in imported(path) if name.split(".")[0] == "click"}


@pytest.mark.parametrize("path", [p for p in MODULES if p.parent.name in ("suite", "engine")]
                         + [SRC / "results" / "check.py"], ids=rel)
def test_suites_and_check_do_not_import_ingest(path):
    assert "tracelab.ingest.pipeline" not in imported(path)


def test_loading_and_linting_a_suite_imports_no_ingest():
    code = ("import sys\nfrom tracelab.suite import load_suite, lint_suite\n"
            f"lint_suite(load_suite({str(REPO / 'sample_traces' / 'suite.yaml')!r}))\n"
            "print(sorted(m for m in sys.modules if m in ('tracelab.ingest.pipeline', 'click', 'pyarrow')))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert (result.returncode, result.stdout.strip()) == (0, "[]"), result.stderr


SQL_WORDS = ("SELECT ", "INSERT ", "UPDATE ", "DELETE ", "CREATE ", "COPY ", "SET ")


def sql_texts(path) -> list[str]:
    """String constants of `path` that read as SQL statements (docstrings and help text aside)."""
    texts = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value.strip()
            if text.upper().startswith(SQL_WORDS):
                texts.append(text)
    return texts


@pytest.mark.parametrize("path", [p for p in MODULES if p.relative_to(SRC).parts[0] == "cli"], ids=rel)
def test_the_cli_holds_no_sql_and_no_connection(path):
    """A command parses flags, calls the library and renders: queries live in sql/ and the library."""
    source = path.read_text(encoding="utf-8")
    assert sql_texts(path) == []
    assert ".con." not in source and "load_sql" not in source


def test_ingest_check_and_effects_never_import_pandas(tmp_path):
    # pyarrow.array and pyarrow.table look for pandas whenever they read a Python list or a
    # foreign frame: where pandas is installed, most of a second of every ingest and check.
    # Arrow columns are built from their buffers instead (tracelab.bulk_insert).
    pytest.importorskip("pandas", reason="pandas is not installed: nothing could import it")
    store = tmp_path / "s.duckdb"
    code = (
        "import sys\nfrom tracelab.store import open_store\nfrom tracelab.results.check import check\n"
        f"with open_store({str(store)!r}) as store:\n"
        f"    store.ingest([{str(REPO / 'sample_traces' / 'native')!r}, {str(REPO / 'sample_traces' / 'otlp')!r}])\n"
        "    store.effects.set({'lookup_*': 'read'})\n"
        f"    check(store, {str(REPO / 'sample_traces' / 'suite.yaml')!r})\n"
        "    loaded = store.con.execute('SELECT count(*) FROM quarantine').fetchall()[0][0] > 0\n"
        "print(loaded, 'pyarrow' in sys.modules, 'pandas' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert (result.returncode, result.stdout.split()) == (0, ["True", "True", "False"]), result.stderr
