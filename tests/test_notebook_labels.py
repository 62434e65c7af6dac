"""notebooks/coverage.ipynb shows labels whole (issue 26): long names are wrapped, or lose a common
prefix the plot states; a field no run records gets a line, not a panel of one "(not recorded)" bar."""
from __future__ import annotations

import json

import nbformat

from tests.conftest import REPO, episode
from tracelab.results.cover import plot_labels
from tracelab.store import open_store

NOTEBOOK = REPO / "notebooks" / "coverage.ipynb"
MODELS = ["gpt-4o-2024-05-13-spotlighting_with_delimiting", "gpt-4o-2024-05-13-transformers_pi_detector"]


def test_plot_labels_keep_every_character_and_say_the_prefix_they_drop():
    labels, prefix = plot_labels(MODELS, width=20)
    assert prefix == "gpt-4o-2024-05-13-"
    assert [prefix + label.replace("\n", "") for label in labels] == MODELS  # nothing cut
    assert all(len(line) <= 20 for label in labels for line in label.split("\n"))
    assert labels[0].split("\n")[0] == "spotlighting_with_"  # broken after a separator, not inside a word


def test_plot_labels_drop_no_prefix_that_would_leave_a_label_empty_or_cut_a_word():
    assert plot_labels(["run", "run-2"])[1] == ""  # "run" would be left empty
    assert plot_labels(["banking", "bankrupt"])[1] == ""  # "bank" ends inside a word
    assert plot_labels(["only-one-value"]) == (["only-one-value"], "")


def test_the_notebook_plots_whole_labels_and_no_panel_of_only_not_recorded(tmp_path, monkeypatch):
    from nbclient import NotebookClient

    traces = tmp_path / "runs.jsonl"
    runs = [episode(f"r{n}", {"kind": "user", "text": "hi"}, {"kind": "assistant", "text": "ok"},
                    case_id="greet", model=MODELS[n % 2], termination="completed") for n in range(6)]
    traces.write_text("\n".join(json.dumps(r) for r in runs) + "\n", encoding="utf-8")
    suite = tmp_path / "suite.yaml"
    suite.write_text("suite: labels\nmin_cases: 1\ndefaults:\n  must_not_leak: [\"sk-live-\"]\n"
                     "cases:\n  - id: greet\n    expect:\n      termination: completed\n", encoding="utf-8")
    store = tmp_path / "labels.duckdb"
    with open_store(store) as opened:
        opened.ingest([traces])
    monkeypatch.setenv("TRACELAB_STORE", str(store))
    monkeypatch.setenv("TRACELAB_SUITE", str(suite))
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    source = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "code")
    assert "…" not in source  # no label is cut short
    NotebookClient(notebook, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    outputs = [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs]
    assert [o for o in outputs if o.output_type == "error"] == []
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "no run records its agent_version: no panel for it" in text
