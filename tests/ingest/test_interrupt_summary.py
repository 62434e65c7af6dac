"""Ctrl-C during an ingest names exactly the files the store holds (issue 29, "Wrong messages"):
an interrupt that lands after a commit completed, before its files were reported, used to say
"0 of N files done" while whole files were stored."""
from __future__ import annotations

import json
import re

import pytest

from tracelab.errors import Interrupted
from tracelab.store import open_store


def write(folder, count):
    paths = []
    for i in range(count):
        path = folder / f"t{i}.jsonl"
        path.write_text(json.dumps({"episode_id": f"e{i}", "steps": []}) + "\n", encoding="utf-8")
        paths.append(path)
    return paths


@pytest.mark.parametrize("files", [1, 3])
def test_an_interrupt_right_after_a_commit_counts_the_committed_files(tmp_path, files):
    paths = write(tmp_path, files)

    def interrupt(report, size):
        if report.status == "loaded":
            raise KeyboardInterrupt

    with open_store(tmp_path / "s.duckdb") as store:
        with pytest.raises(Interrupted) as caught:
            store.ingest(paths, progress=interrupt)
        stored = store.con.execute("SELECT count(*) FROM sources").fetchone()[0]
    assert stored >= 1  # the interrupt met a completed commit
    done = int(re.match(r"interrupted: (\d+) of", str(caught.value)).group(1))
    assert done == stored, str(caught.value)
