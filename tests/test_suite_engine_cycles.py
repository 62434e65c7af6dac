"""suite/ and engine/ import no cycle, and suite/ never imports engine/ at runtime (issue 24).

Imports under `if TYPE_CHECKING:` are left out: they never run.
"""
from __future__ import annotations

import ast

from tests.conftest import REPO

SRC = REPO / "src"
PACKAGES = ("tracelab.suite", "tracelab.engine")


def module_name(path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def runtime_imports(path) -> set[str]:
    """The modules `path` imports when it runs (inside functions too), TYPE_CHECKING aside."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = {id(node) for block in ast.walk(tree) if isinstance(block, ast.If)
               and "TYPE_CHECKING" in ast.unparse(block.test)
               for stmt in block.body for node in ast.walk(stmt)}
    names: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            # `from package import module` imports the module, not (only) the package's names
            submodules = {f"{node.module}.{a.name}" for a in node.names} & MODULES.keys()
            names.update(submodules or {node.module})
    return names


MODULES = {module_name(p): p
           for package in PACKAGES for p in (SRC / package.replace(".", "/")).glob("*.py")}
GRAPH = {name: runtime_imports(path) for name, path in MODULES.items()}


def cycle_from(start: str) -> list[str] | None:
    """A path start -> ... -> start through GRAPH, if there is one."""
    stack, seen = [(start, [start])], set()
    while stack:
        node, path = stack.pop()
        for target in GRAPH.get(node, ()):
            if target == start:
                return [*path, start]
            if target in GRAPH and target not in seen:
                seen.add(target)
                stack.append((target, [*path, target]))
    return None


def test_no_import_cycle_among_suite_and_engine():
    cycles = {m: c for m in GRAPH if (c := cycle_from(m)) is not None}
    assert cycles == {}


def test_suite_never_imports_engine_at_runtime():
    reaching_up = {module: sorted(n for n in names if n.startswith("tracelab.engine"))
                   for module, names in GRAPH.items() if module.startswith("tracelab.suite")}
    assert {m: n for m, n in reaching_up.items() if n} == {}


def test_the_graph_sees_the_registries():
    """The graph is read at all: families imports the rule and expect registries."""
    assert {"tracelab.suite.rules", "tracelab.suite.expect"} <= GRAPH["tracelab.suite.families"]
