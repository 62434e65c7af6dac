"""notebooks/coverage.ipynb: committed without outputs, and runs end to end on the sample traces."""
from __future__ import annotations

import nbformat
import pytest

from tests.conftest import REPO
from tracelab.store import open_store

NOTEBOOK = REPO / "notebooks" / "coverage.ipynb"


def test_the_committed_notebook_has_no_outputs():
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code
    assert [(cell.outputs, cell.execution_count) for cell in code] == [([], None)] * len(code)


def test_the_notebook_runs_on_the_sample_traces(tmp_path, monkeypatch):
    from nbclient import NotebookClient

    store = tmp_path / "samples.duckdb"
    with open_store(store) as opened:
        opened.ingest([REPO / "sample_traces" / "native"])
    # the kernel inherits the environment: the parameters cell reads these
    monkeypatch.setenv("TRACELAB_STORE", str(store))
    monkeypatch.setenv("TRACELAB_SUITE", str(REPO / "sample_traces" / "suite.yaml"))
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(notebook, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()

    outputs = [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs]
    assert [o for o in outputs if o.output_type == "error"] == []
    pictures = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(pictures) == 3  # heatmap, pass rate by version and model, not-exercised reasons
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "sample-agents: 172 assertions in 13 cases over 36 runs; 1 never exercised" in text
    tables = "".join(o.get("data", {}).get("text/html", "") for o in outputs)
    assert "no-unassigning" in tables       # the never-exercised guard
    assert "LEAKED" in tables               # the leaks table
    assert "transfer_money" in tables       # the executed writes table


@pytest.mark.parametrize("name", ["coverage_matrix", "pass_rate_by", "not_exercised_reasons", "leaks",
                                  "executed_writes"])
def test_the_notebook_calls_the_library_helpers(name):
    assert f"cover.{name}(" in NOTEBOOK.read_text(encoding="utf-8")
