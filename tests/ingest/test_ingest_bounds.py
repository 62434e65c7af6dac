"""Ingest under hostile inputs (issue 29, "Data loss", "Denial of service", "Wrong messages"):
`--replace` keeps each file's episode count, a glob does not follow a looping link, a large
`.json` array is streamed element by element, a compressed line too large to load is read
once for detection and quarantined, and running out of file handles is one line."""
from __future__ import annotations

import gzip
import json
import os

import pytest

from tests.conftest import REPO
from tests.reliability.support import run_cli
from tracelab.store import open_store

BANKING = REPO / "sample_traces" / "native" / "banking.jsonl"


def one_line_error(err: str) -> bool:
    return err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err


def episodes(n: int, pad: int = 0) -> list[dict]:
    return [{"episode_id": f"e{i}", "steps": [{"kind": "user", "text": "x" * pad}]} for i in range(n)]


def test_replace_over_ingested_files_keeps_their_episode_counts(tmp_path):
    store = str(tmp_path / "s.duckdb")
    assert run_cli("ingest", str(BANKING), "--store", store)[0] == 0
    assert run_cli("ingest", "--replace", str(BANKING), "--store", store)[0] == 0
    with open_store(store, read_only=True) as opened:
        assert opened.con.sql("SELECT episodes FROM sources").fetchall() == [(10,)]
    code, out, _ = run_cli("ingest", str(BANKING), "--store", store)
    assert code == 0 and "10 skipped (already ingested)" in out


def test_a_glob_does_not_follow_a_link_that_loops(tmp_path):
    sub = tmp_path / "d" / "sub"
    sub.mkdir(parents=True)
    (sub / "t.jsonl").write_bytes(BANKING.read_bytes())
    (sub / "loop").symlink_to("..")
    code, out, err = run_cli("ingest", str(tmp_path / "d" / "**" / "*.jsonl"), "--store", str(tmp_path / "s.duckdb"))
    assert code == 0, err
    assert "loop" not in out and "skipped" not in out.replace("skipped (already", "")
    assert "10 episodes added" in out and "1 file " in out


@pytest.fixture
def small_record_limit(monkeypatch):
    """Records and whole documents limited to 4 KiB: the bound a 256 MiB document meets."""
    import tracelab.formats.source as base

    monkeypatch.setattr(base, "RECORD_LIMIT", 4096)
    monkeypatch.setenv("TRACELAB_WORKERS", "0")


@pytest.mark.parametrize("fmt", ["auto", "native"])
@pytest.mark.parametrize("suffix", [".json", ".json.gz"])
def test_a_json_array_larger_than_a_record_is_streamed_element_by_element(tmp_path, small_record_limit, fmt,
                                                                         suffix):
    runs = episodes(200, pad=50)  # ~20 KB: five times the (lowered) record limit
    text = json.dumps(runs, indent=1)
    path = tmp_path / f"big{suffix}"
    path.write_bytes(gzip.compress(text.encode()) if suffix.endswith(".gz") else text.encode())
    code, out, err = run_cli("ingest", "--format", fmt, str(path), "--store", str(tmp_path / "s.duckdb"))
    assert code == 0 and "Traceback" not in err, out + err
    assert "200 episodes added" in out and "0 quarantined" in out


def test_a_streamed_array_quarantines_a_bad_element_and_an_oversized_one(tmp_path, small_record_limit):
    good = [json.dumps(r) for r in episodes(30)]
    text = "[" + ",\n".join([*good[:10], '{"episode_id": "bad", "steps": [NaN]}', *good[10:20],
                             json.dumps(episodes(1, pad=6000)[0] | {"episode_id": "huge"}), *good[20:]]) + "]"
    path = tmp_path / "big.json"
    path.write_text(text)
    code, out, err = run_cli("ingest", str(path), "--store", str(tmp_path / "s.duckdb"))
    assert code == 0 and "Traceback" not in err, out + err
    assert "30 episodes added" in out and "2 quarantined" in out
    with open_store(tmp_path / "s.duckdb", read_only=True) as opened:
        assert sorted(opened.con.sql("SELECT line FROM quarantine").fetchall()) == [(11,), (22,)]


def test_a_streamed_array_cut_short_loads_the_elements_before_the_cut(tmp_path, small_record_limit):
    text = json.dumps(episodes(100, pad=50))
    path = tmp_path / "cut.json"
    path.write_text(text[: len(text) * 3 // 4])
    code, out, err = run_cli("ingest", str(path), "--store", str(tmp_path / "s.duckdb"))
    assert code == 0, err
    assert "1 quarantined" in out and " 0 episodes added" not in out


def test_a_compressed_line_too_large_to_load_is_read_once_for_detection(tmp_path, monkeypatch):
    """(The 17 formats' `claims` each decompressed the line again: 4 minutes for 10 GB.)"""
    import tracelab.formats.source as base

    monkeypatch.setattr(base, "RECORD_LIMIT", 1 << 16)
    monkeypatch.setenv("TRACELAB_WORKERS", "0")
    line = json.dumps({"episode_id": "e", "steps": [{"kind": "user", "text": "x" * (1 << 20)}]})
    path = tmp_path / "one.jsonl.gz"
    path.write_bytes(gzip.compress((line + "\n").encode()))
    opened = []
    real_open = base.Source.open

    def counting(self):
        opened.append(self.uri)
        return real_open(self)

    monkeypatch.setattr(base.Source, "open", counting)
    code, out, err = run_cli("ingest", str(path), "--store", str(tmp_path / "s.duckdb"))
    assert code in (0, 2) and "Traceback" not in err  # quarantined, or "no format claims this file"
    assert len(opened) <= 3, opened  # one bounded detection read (and one load): not once per format


def test_running_out_of_file_handles_is_one_line(tmp_path, monkeypatch):
    import errno

    import tracelab.ingest.reader as reader

    def exhausted(*args, **kwargs):
        raise OSError(errno.EMFILE, os.strerror(errno.EMFILE))

    monkeypatch.setattr(reader, "Source", exhausted)
    code, _, err = run_cli("ingest", str(BANKING), "--store", str(tmp_path / "s.duckdb"))
    assert code == 1 and one_line_error(err), err
    assert "too many open files" in err.lower() and "ulimit -n" in err


def test_workers_are_not_started_without_the_file_handles_they_need(monkeypatch):
    import resource

    from tracelab.errors import TracelabError
    from tracelab.ingest import parse_pool

    monkeypatch.setattr(resource, "getrlimit", lambda which: (20, 1 << 20))
    with pytest.raises(TracelabError, match=r"file handles .*\(20; too many open files\).*ulimit -n"):
        parse_pool._enough_file_handles(2)
    monkeypatch.setattr(resource, "getrlimit", lambda which: (1024, 1 << 20))
    parse_pool._enough_file_handles(2)


def test_a_bad_first_element_does_not_hide_a_streamed_array_from_detection(tmp_path, small_record_limit):
    text = "[" + ",\n".join(['{"episode_id": "bad", "steps": [NaN]}', *(json.dumps(r) for r in episodes(60, 40))]) + "]"
    path = tmp_path / "big.json"
    path.write_text(text)
    code, out, err = run_cli("ingest", str(path), "--store", str(tmp_path / "s.duckdb"))
    assert code == 0, err
    assert "60 episodes added" in out and "1 quarantined" in out
