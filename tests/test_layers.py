"""The library never reaches up: which modules may import what (STYLE: layout and habits).

Checked on the source (every import statement, lazy ones inside functions included; imports
under `if TYPE_CHECKING:` left out, since they never run) and, for loading a suite, on what a
fresh interpreter actually imports. ruff's banned-api rule (TID251, each package's ruff.toml)
enforces the same order on every line, TYPE_CHECKING imports included.
"""
from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

SRC = REPO / "src" / "tracelab"
MODULES = sorted(p for p in SRC.rglob("*.py") if "__pycache__" not in p.parts)

ORDER = ("foundation", "formats", "ingest", "store", "suite", "engine", "results", "view", "api", "cli")
"""The pipeline's stages, bottom first: a stage imports only the stages before it."""
BESIDE = {"generate": ("foundation", "formats", "ingest"),
          "spark": ("foundation", "formats", "ingest", "store", "suite", "engine", "results")}
"""Beside the pipeline: what each may import (and only the CLI imports them)."""
TOP = {"api": "api", "__main__": "cli"}
"""What sits above the stages, beside the foundation modules: the public API and the entry point.
`tracelab` itself (its `__init__`) re-exports the public API, so it counts as `api` too."""


def stage_of(module: str) -> str:
    """`tracelab.store.effects` -> store; a top-level module is a foundation module unless in TOP."""
    parts = module.split(".")
    if len(parts) == 1:
        return "api"  # `tracelab` itself: the lazy re-exports of the public API
    if len(parts) == 2 and parts[1] in TOP:
        return TOP[parts[1]]
    if parts[1] in ORDER or parts[1] in BESIDE:
        return parts[1]
    return "foundation"


def may_import(importer: str, imported: str) -> bool:
    if importer == imported:
        return True
    if importer in BESIDE:
        return imported in BESIDE[importer]
    if imported in BESIDE:
        return importer == "cli"
    return ORDER.index(imported) < ORDER.index(importer)


def module_name(path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_only(tree: ast.AST) -> set[int]:
    """The ids of the nodes under `if TYPE_CHECKING:`."""
    return {id(node) for branch in ast.walk(tree)
            if isinstance(branch, ast.If) and "TYPE_CHECKING" in ast.unparse(branch.test)
            for statement in branch.body for node in ast.walk(statement)}


def runtime_imports(path) -> list[tuple[int, str]]:
    """(line, module) of every tracelab or click import `path` can run, at the top or inside a
    function; `from package import module` counts as an import of that module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    type_only = _type_only(tree)
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if id(node) in type_only:
            continue
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                named = f"{node.module}.{alias.name}"
                found.append((node.lineno, named if named in NAMES else node.module))
    return [(line, name) for line, name in found if name.split(".")[0] in ("tracelab", "click")]


def imported(path) -> set[str]:
    """Every module `path` imports, at the top or inside a function."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


NAMES = {module_name(p) for p in MODULES}


def rel(path) -> str:
    return str(path.relative_to(SRC.parent))


@pytest.mark.parametrize("path", MODULES, ids=rel)
def test_each_module_imports_only_the_stages_below_it(path):
    here = stage_of(module_name(path))
    reaching_up = [f"line {line}: {name} ({'click' if name.startswith('click') else stage_of(name)})"
                   for line, name in runtime_imports(path)
                   if not may_import(here, "cli" if name.split(".")[0] == "click" else stage_of(name))]
    assert reaching_up == [], f"{here} may not import these"


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for after in sorted(graph.get(node, ())):
            if after not in index:
                visit(after)
                low[node] = min(low[node], low[after])
            elif after in stack:
                low[node] = min(low[node], index[after])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle():
    """No module imports, even lazily inside a function, one that imports it back."""
    graph = {module_name(p): {name for _, name in runtime_imports(p) if name in NAMES and name != module_name(p)}
             for p in MODULES}
    assert cycles(graph) == []


PROBE = "import click\n" + "".join(f"import tracelab.{name}\n" for name in
                                  ("formats", "ingest", "store", "suite", "engine", "results", "view",
                                   "generate", "spark", "api", "cli"))


@pytest.mark.parametrize("stage", ["foundation", *ORDER[1:-2], *BESIDE])
def test_ruff_refuses_every_import_of_a_stage_above(stage):
    """The configuration itself (each package's ruff.toml) refuses exactly what the order forbids."""
    beside_python = Path(sys.executable).parent / "ruff"
    ruff = str(beside_python) if beside_python.exists() else shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed (the `test` extra installs it)")
    where = SRC / "probe.py" if stage == "foundation" else SRC / stage / "probe.py"
    result = subprocess.run([ruff, "check", "--no-cache", "--select", "TID251", "--output-format", "concise",
                             "--stdin-filename", str(where), "-"], input=PROBE, capture_output=True, text=True,
                            cwd=REPO)
    refused = {line.split("`")[1] for line in result.stdout.splitlines() if "TID251" in line}
    expected = {"click"} | {f"tracelab.{name}" for name in
                            ("formats", "ingest", "store", "suite", "engine", "results", "view",
                             "generate", "spark", "api", "cli")
                            if name != stage and not may_import(stage, name)}
    assert refused == expected, result.stderr


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


def test_a_saved_check_never_imports_pyarrow(tmp_path):
    # importing pyarrow alone took 0.1-0.2 s of a check: the check scans its frames through the
    # Arrow PyCapsule interface, saving included (results.check._insert_frame)
    from tracelab.store import open_store

    store = tmp_path / "s.duckdb"
    with open_store(store) as opened:
        opened.ingest([REPO / "sample_traces" / "native"])
    code = (
        "import sys\nfrom tracelab.results.check import check\n"
        f"run = check({str(store)!r}, {str(REPO / 'sample_traces' / 'suite.yaml')!r})\n"
        f"since = check({str(store)!r}, {str(REPO / 'sample_traces' / 'suite.yaml')!r}, since=run.run_id)\n"
        "print(run.saved and since.saved, 'pyarrow' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert (result.returncode, result.stdout.split()) == (0, ["True", "False"]), result.stderr
