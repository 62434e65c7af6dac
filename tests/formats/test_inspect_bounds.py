"""An Inspect sample referencing one attachment N times (issue 29, "Denial of service"): 1 MB
referenced 4,000 times was a 4 GB record from a 1.2 MB file; the expansion is counted before
it is written out, and past the record limit the sample is quarantined."""
from __future__ import annotations

import json

import pytest

from tracelab.formats import inspect_log
from tracelab.formats.base import Quarantined
from tracelab.formats.source import Source
from tracelab.formats.values import RecordError

SPEC = {"eval_id": "ev1", "task_id": "tk1", "task": "helpdesk", "model": "openai/gpt-4o-mini"}


def sample(references: int, size: int) -> dict:
    return {"id": 1, "epoch": 1, "attachments": {"big": "x" * size},
            "messages": [{"id": f"u{i}", "role": "user", "content": "attachment://big"} for i in range(references)]}


def test_attachments_expanding_past_the_record_limit_quarantine_the_sample(monkeypatch, tmp_path):
    monkeypatch.setattr(inspect_log, "RECORD_LIMIT", 1 << 20)
    log = {"version": 2, "status": "success", "eval": SPEC, "samples": [sample(2000, 1 << 10)]}  # 2 MB expanded
    path = tmp_path / "log.json"
    path.write_text(json.dumps(log))
    items = list(inspect_log.episodes(Source(path)))
    assert len(items) == 1 and isinstance(items[0], Quarantined)
    assert "attachments expand it past 1 MiB" in items[0].reason


def test_attachments_within_the_limit_still_resolve(monkeypatch):
    monkeypatch.setattr(inspect_log, "RECORD_LIMIT", 1 << 20)
    episode = inspect_log.sample_episode({"eval": SPEC, "status": "success"}, sample(500, 1 << 10), "samples[0]")
    assert episode["steps"][0]["text"] == "x" * 1024


def test_the_expansion_is_refused_before_it_is_written(monkeypatch):
    monkeypatch.setattr(inspect_log, "RECORD_LIMIT", 1 << 20)
    import tracelab.formats.inspect_log as module

    def never(*args, **kwargs):
        raise AssertionError("the steps were built from an expansion past the limit")

    monkeypatch.setattr(module, "sample_steps", never)
    with pytest.raises(RecordError, match="attachments expand it past"):
        module.sample_episode({"eval": SPEC, "status": "success"}, sample(2000, 1 << 10), "samples[0]")
