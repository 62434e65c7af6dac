"""Bulk replay at production shape (issue 11, trace-format §6): one file per run shares batches
and transactions; each file is still wholly loaded with its `sources` row, or not at all."""
from __future__ import annotations

import gzip
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import tracelab.formats.source as source
import tracelab.ingest.batches as ingest_batches
import tracelab.ingest.prepare as prepare
import tracelab.ingest.reader as ingest_reader
import tracelab.ingest.writer as ingest_writer
from tests.conftest import episode
from tests.reliability.support import tracelab
from tracelab.errors import Interrupted
from tracelab.formats.source import Source
from tracelab.ingest.prepare import detect_format
from tracelab.store import open_store


def write(path: Path, *records: dict | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return path


def runs_folder(root: Path, n: int) -> Path:
    for i in range(n):
        write(root / f"{i // 100:02d}" / f"run-{i:04d}.jsonl",
              episode(f"r{i}", {"kind": "user", "text": f"task {i}"},
                      {"kind": "tool_call", "name": "lookup", "call_id": "c1", "args": {"i": i}},
                      {"kind": "tool_result", "call_id": "c1", "text": "ok"}))
    return root


def test_small_files_share_batches_and_each_gets_its_sources_row(store, tmp_path, monkeypatch):
    folder = runs_folder(tmp_path / "runs", 300)
    scripts: list[str] = []
    real = ingest_writer.run_script
    monkeypatch.setattr(ingest_writer, "run_script", lambda con, name, params=None: (
        scripts.append(name), real(con, name, params))[1])

    report = store.ingest([folder])

    assert (report.added, report.count("loaded"), len(report.files)) == (300, 300, 300)
    # the staging SQL is planned once for the 300 files, not once per file
    assert scripts.count("ingest/stage") == 1
    assert store.sql("SELECT count(*), count(DISTINCT source_uri), sum(episodes) FROM sources").row(0) == (
        300, 300, 300)
    assert store.sql("SELECT count(*) FROM tool_calls WHERE status = 'ok' AND result_step_idx = 2").item() == 300
    assert [f.path for f in report.files] == sorted(f.path for f in report.files)  # input order


def test_a_rerun_reads_no_unchanged_file_and_looks_files_up_in_chunks(store, tmp_path, monkeypatch):
    folder = runs_folder(tmp_path / "runs", 250)
    store.ingest([folder])
    touched = sorted(folder.rglob("*.jsonl"))[7]
    os.utime(touched, ns=(0, 0))  # same bytes, another time: read again, known by its hash
    queries: list[str] = []
    real_execute = ingest_reader.Reader._recorded
    monkeypatch.setattr(ingest_reader.Reader, "_recorded", lambda self, items: (queries.append(len(items)),
                                                                           real_execute(self, items))[1])
    monkeypatch.setattr(ingest_reader, "LOOKUP_FILES", 100)
    real_load = Source._load
    read: list[Path] = []
    monkeypatch.setattr(Source, "_load", lambda self: (read.append(self.path), real_load(self))[1])
    monkeypatch.setattr(prepare, "detect_format", lambda *a: pytest.fail("a recorded file was parsed again"))

    again = store.ingest([folder])

    assert (again.count("already-ingested"), again.added, again.skipped) == (250, 0, 250)
    assert queries == [100, 100, 50]  # one look-up per chunk of files, not one per file
    assert set(read) == {touched}


def test_files_sharing_a_transaction_see_each_other_as_stored(store, tmp_path):
    first = write(tmp_path / "a.jsonl", episode("x", agent="1"))
    same = write(tmp_path / "b.jsonl", episode("x", agent="1"), episode("y"))
    other = write(tmp_path / "c.jsonl", episode("x", agent="2"), episode("y"), episode("y", agent="3"))

    report = store.ingest([first, same, other])

    assert [(f.added, f.skipped, f.quarantined) for f in report.files] == [(1, 0, 0), (1, 1, 0), (0, 1, 2)]
    assert store.sql("SELECT source_uri, line, reason FROM quarantine ORDER BY line").rows() == [
        (str(other), 1, "episode_id 'x' is already stored with different content (use --replace to replace it)"),
        (str(other), 3, "episode_id 'y' is already stored with different content (use --replace to replace it)"),
    ]
    assert store.sql("SELECT source_uri, episodes, quarantined FROM sources ORDER BY 1").rows() == [
        (str(first), 1, 0), (str(same), 1, 0), (str(other), 0, 2)]


def test_an_unreadable_file_among_small_files_loads_nothing_and_the_others_load(store, tmp_path):
    good = write(tmp_path / "a.jsonl", episode("a"))
    cut = tmp_path / "b.jsonl.gz"
    cut.write_bytes(gzip.compress(json.dumps(episode("b")).encode() * 50)[:-20])
    late = write(tmp_path / "c.jsonl", episode("c"))

    report = store.ingest([good, cut, late])

    assert [f.status for f in report.files] == ["loaded", "failed", "loaded"]
    assert store.sql("SELECT episode_id FROM episodes ORDER BY 1").rows() == [("a",), ("c",)]
    assert store.sql("SELECT source_uri FROM sources ORDER BY 1").rows() == [(str(good),), (str(late),)]


# -- one read per file ----------------------------------------------------------------------


def truncate_after_hashing(monkeypatch, path: Path, keep: int) -> None:
    """Simulate a file cut while it is being ingested: right after its content is hashed."""
    real = Source._load

    def load(self):
        real(self)
        if self.path == path:
            with open(path, "r+b") as fh:
                fh.truncate(keep)

    monkeypatch.setattr(Source, "_load", load)


def test_a_small_file_truncated_after_its_hash_loads_as_it_was_read(store, tmp_path, monkeypatch):
    path = write(tmp_path / "runs.jsonl", *(episode(f"e{i}") for i in range(1000)))
    whole = path.read_bytes()
    truncate_after_hashing(monkeypatch, path, len(whole) // 2)

    report = store.ingest([path])

    assert report.added == 1000
    assert store.sql("SELECT content_hash FROM sources").item() == hashlib.sha256(whole).hexdigest()


def test_a_streamed_file_truncated_after_its_hash_is_reported_and_loads_nothing(store, tmp_path, monkeypatch):
    path = write(tmp_path / "runs.jsonl", *(episode(f"e{i}", {"kind": "user", "text": "x" * 50})
                                            for i in range(2000)))
    monkeypatch.setattr(source, "WHOLE_FILE_LIMIT", 4096)  # streamed, batch by batch
    monkeypatch.setattr(ingest_batches, "BATCH_RECORDS", 200)
    truncate_after_hashing(monkeypatch, path, path.stat().st_size // 2 + 7)

    [report] = store.ingest([path]).files

    assert (report.status, report.added) == ("failed", 0)
    assert report.message == f"{path}: changed while it was read; nothing of it was loaded"
    assert store.sql("SELECT count(*) FROM episodes").item() == 0
    assert store.sql("SELECT count(*) FROM sources").item() == 0
    monkeypatch.undo()
    again = store.ingest([path])  # what the file holds now loads; nothing says "already ingested"
    complete = path.read_bytes().count(b"\n")
    assert 900 < complete < 1100
    assert (again.added, again.quarantined) == (complete, 1)  # the cut last line is quarantined


# -- auto-detection from a sample -----------------------------------------------------------


def test_bad_leading_lines_do_not_hide_a_file_and_are_quarantined(store, tmp_path):
    deep = "[" * 100_000 + "]" * 100_000
    path = write(tmp_path / "runs.jsonl", "[1,2,3]", "not json", deep, episode("a"), episode("b"))

    report = store.ingest([path])

    assert (report.files[0].status, report.files[0].format) == ("loaded", "native")
    assert (report.added, report.quarantined) == (2, 3)
    assert [line for line, in store.sql("SELECT line FROM quarantine ORDER BY line").rows()] == [1, 2, 3]


def test_plain_text_records_decide_nothing_when_a_later_one_has_a_marker(tmp_path):
    plain = {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}
    tool_use = {"messages": [{"role": "user", "content": "add"}, {"role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": "calc", "input": {"a": 1}}]}]}
    mixed = write(tmp_path / "mixed.jsonl", plain, plain, tool_use)
    only_plain = write(tmp_path / "plain.jsonl", plain, plain)

    assert detect_format(Source(mixed)).name == "anthropic"
    assert detect_format(Source(only_plain)).name == "openai-chat"


# -- large records --------------------------------------------------------------------------


def test_a_40_mb_record_loads(store, tmp_path):
    path = write(tmp_path / "big.jsonl", episode("shot", {"kind": "tool_call", "name": "screenshot", "call_id": "s"},
                                                  {"kind": "tool_result", "call_id": "s", "text": "p" * (40 << 20)}),
                 episode("after"))

    report = store.ingest([path])

    assert (report.added, report.quarantined) == (2, 0)
    assert store.sql("SELECT strlen(result_text) FROM tool_calls").item() == 40 << 20


BOMB = """
import re, sys
from pathlib import Path
from tracelab.store import open_store
with open_store(sys.argv[1]) as store:
    report = store.ingest([sys.argv[2]])
    print(report.added, report.quarantined)
    print(store.sql("SELECT reason FROM quarantine").item())
# this process's own peak (ru_maxrss would count the parent's pages it forked from)
print(re.search(r"VmHWM:\\s+(\\d+) kB", Path("/proc/self/status").read_text()).group(1))
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the peak RSS from /proc")
def test_a_gzip_bomb_line_is_quarantined_with_its_size_in_bounded_memory(tmp_path):
    bomb = tmp_path / "bomb.jsonl.gz"
    size = 600 << 20  # one line of 600 MiB, from 0.6 MB of gzip
    with gzip.open(bomb, "wb", compresslevel=1) as fh:
        fh.write(json.dumps(episode("ok")).encode() + b"\n" + b'{"episode_id": "bomb", "x": "')
        block = b"a" * (1 << 20)
        for _ in range(size >> 20):
            fh.write(block)
        fh.write(b'", "steps": []}\n')
        fh.write(json.dumps(episode("after")).encode() + b"\n")
    line = len(b'{"episode_id": "bomb", "x": "') + size + len(b'", "steps": []}')

    child = subprocess.run([sys.executable, "-c", BOMB, str(tmp_path / "s.duckdb"), str(bomb)],
                           capture_output=True, text=True, timeout=300)
    assert child.returncode == 0, child.stderr
    added, reason, peak_kib = child.stdout.splitlines()
    assert (added, reason) == ("2 1", f"the record is {line:,} bytes of JSON; records over 256 MiB are not loaded")
    peak_mib = int(peak_kib) / 1024
    assert peak_mib < 600, f"peak RSS {peak_mib:.0f} MiB for a 600 MiB line"


# -- --replace ------------------------------------------------------------------------------


def test_replace_reads_a_recorded_file_again(store, tmp_path):
    first = write(tmp_path / "a.jsonl", episode("x", agent="old"))
    later = write(tmp_path / "b.jsonl", episode("x", agent="new"), episode("y"))
    store.ingest([first])
    store.ingest([later])
    assert store.sql("SELECT reason FROM quarantine").item().endswith("(use --replace to replace it)")

    report = store.ingest([later], replace=True)  # b.jsonl's hash is recorded: read it anyway

    assert (report.files[0].status, report.added, report.skipped) == ("loaded", 1, 1)
    assert store.sql("SELECT episode_id, agent FROM episodes ORDER BY 1").rows() == [("x", "new"), ("y", None)]
    # b.jsonl holds both its episodes (y stored as it was): a later run skips 2 (issue 29)
    assert store.sql("SELECT source_uri, episodes, quarantined FROM sources ORDER BY 1").rows() == [
        (str(first), 1, 0), (str(later), 2, 0)]
    assert store.sql("SELECT count(*) FROM quarantine").item() == 0  # the old read's rows made way


# -- inputs that are not regular files -------------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifos_links_and_store_files_are_reported_as_skipped_never_read(tmp_path):
    folder = tmp_path / "in"
    write(folder / "a.jsonl", episode("a"))
    os.mkfifo(folder / "b.fifo.jsonl")
    os.symlink(folder / "gone.jsonl", folder / "c-dangling.jsonl")
    os.symlink(folder / "d-loop.jsonl", folder / "d-loop.jsonl")
    (folder / "e.duckdb").write_bytes(b"not read")
    (folder / "e.duckdb.wal").write_bytes(b"not read")
    write(folder / "f.jsonl", episode("f"))

    result = tracelab("ingest", str(folder), "--store", str(tmp_path / "s.duckdb"), timeout=60)

    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    skipped = [line for line in result.stderr.splitlines() if line.startswith("skipped: ")]
    assert skipped == [
        f"skipped: {folder / 'b.fifo.jsonl'}: not a regular file (a FIFO)",
        f"skipped: {folder / 'c-dangling.jsonl'}: a link that leads nowhere (No such file or directory)",
        f"skipped: {folder / 'd-loop.jsonl'}: a link that leads nowhere (Too many levels of symbolic links)",
        f"skipped: {folder / 'e.duckdb'}: a DuckDB store file, never read as traces",
        f"skipped: {folder / 'e.duckdb.wal'}: a DuckDB store file, never read as traces",
    ]
    assert result.stdout.strip().endswith("5 not regular files, 0 failed)")
    with open_store(tmp_path / "s.duckdb") as store:
        assert store.sql("SELECT episode_id FROM episodes ORDER BY 1").rows() == [("a",), ("f",)]


def test_a_file_name_that_is_not_utf8_loads_and_the_files_after_it_too(store, tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    odd = os.path.join(os.fsencode(folder), b"run-\xff.jsonl")
    with open(odd, "wb") as fh:
        fh.write(json.dumps(episode("odd")).encode() + b"\n")
    write(folder / "z.jsonl", episode("z"))

    report = store.ingest([folder])

    assert (report.added, [f.status for f in report.files]) == (2, ["loaded", "loaded"])
    assert store.sql("SELECT source_uri FROM sources ORDER BY 1").rows() == [
        (f"{folder}/run-\\xff.jsonl",), (f"{folder}/z.jsonl",)]


# -- timestamps, memory, interrupts (issue 14: 7, 8, 9) -----------------------------------------


@pytest.mark.parametrize("stamp", ["infinity", "-infinity", "epoch", "2026-01-01T00:00:00+99:00",
                                   "2026-01-01 10:00:00 America/New_York", "2026-13-40T00:00:00Z",
                                   "10000-01-01T00:00:00Z"])
def test_timestamps_that_are_not_iso_8601_are_quarantined(store, tmp_path, stamp):
    path = write(tmp_path / "t.jsonl", episode("e", started_at=stamp),
                 episode("s", {"kind": "user", "text": "hi", "ts": stamp}),
                 episode("ok", {"kind": "user", "ts": "2026-01-01T10:00:00.5+02:00"},
                         started_at="2026-01-01", ended_at="2026-01-01T10:00:09Z"))

    report = store.ingest([path])

    assert (report.added, report.quarantined) == (1, 2)
    assert store.sql("SELECT line, reason FROM quarantine ORDER BY line").rows() == [
        (1, "started_at must be an ISO-8601 timestamp string"),
        (2, "steps[0]: ts must be an ISO-8601 timestamp string")]
    assert store.sql("SELECT * FROM episodes").height == 1  # every row reads back
    assert store.sql("SELECT * FROM steps").height == 1


def test_a_file_duckdb_cannot_hold_in_memory_fails_alone_and_the_next_file_loads(tmp_path):
    big = write(tmp_path / "a.jsonl", episode("big", {"kind": "tool_call", "name": "t", "args": {"q": "z" * (6 << 20)}},
                                              {"kind": "assistant", "text": "y" * (6 << 20)}))
    small = write(tmp_path / "b.jsonl", episode("small"))

    result = tracelab("ingest", str(big), str(small), "--store", str(tmp_path / "s.duckdb"),
                      env={**os.environ, "TRACELAB_MEMORY_LIMIT": "16MB"}, timeout=120)

    assert result.returncode == 3
    assert "Traceback" not in result.stderr
    assert f"failed: {big}: not loaded, DuckDB ran out of memory (" in result.stderr
    assert "raise TRACELAB_MEMORY_LIMIT or split the file" in result.stderr
    assert "could not be written" not in result.stderr
    with open_store(tmp_path / "s.duckdb") as store:
        assert store.sql("SELECT episode_id FROM episodes").rows() == [("small",)]
        assert store.sql("SELECT source_uri FROM sources").rows() == [(str(small),)]


def test_an_interrupt_rolls_back_the_open_batch_and_says_what_was_done(store, tmp_path, monkeypatch):
    folder = runs_folder(tmp_path / "runs", 10)
    monkeypatch.setattr(ingest_batches, "BATCH_RECORDS", 2)  # five transactions of two files
    calls = []
    real = ingest_writer.Writer._load_batch

    def load(self, batch):
        calls.append(batch)
        if len(calls) == 3:
            raise KeyboardInterrupt
        real(self, batch)

    monkeypatch.setattr(ingest_writer.Writer, "_load_batch", load)

    with pytest.raises(Interrupted) as raised:
        store.ingest([folder])

    assert str(raised.value) == ("interrupted: 4 of 10 files done (4 loaded, 4 episodes added); "
                                 "the other 6 were not loaded")
    assert store.sql("SELECT count(*) FROM episodes").item() == 4
    assert store.sql("SELECT count(*) FROM sources").item() == 4
    assert store.sql("SELECT count(*) FROM steps").item() == 12


def test_the_store_is_verified_before_the_first_write_only(tmp_path, monkeypatch):
    """A re-run that finds every file ingested writes nothing, so it does not scan the store
    (`Store._verify` costs one scan of everything stored); an ingest that writes verifies once."""
    from tracelab.store import Store

    folder = runs_folder(tmp_path / "runs", 30)
    verified: list[int] = []
    real = Store._verify
    monkeypatch.setattr(Store, "_verify", lambda self: (verified.append(1), real(self))[1])
    with open_store(tmp_path / "s.duckdb") as store:
        assert store.ingest([folder]).added == 30
        assert verified == [1]
        assert store.ingest([folder]).count("already-ingested") == 30
        assert verified == [1]
        write(folder / "new" / "run.jsonl", episode("fresh", {"kind": "user", "text": "hi"}))
        assert store.ingest([folder]).added == 1
        assert verified == [1, 1]


def test_a_file_named_twice_is_known_twice_on_a_rerun(store, tmp_path, monkeypatch):
    folder = runs_folder(tmp_path / "runs", 3)
    one = sorted(folder.rglob("*.jsonl"))[1]
    store.ingest([folder])
    monkeypatch.setattr(Source, "_load", lambda self: pytest.fail("a recorded file was read again"))

    again = store.ingest([one, folder, one])

    assert [f.status for f in again.files] == ["already-ingested"] * 5
    assert [f.path for f in again.files].count(str(one)) == 3
    assert again.skipped == 5


def test_a_rerun_of_recorded_files_imports_neither_pyarrow_nor_pandas(tmp_path):
    """The look-ups bind plain lists: a re-run over a folder already ingested never imports
    pyarrow (0.2 s) nor the pandas DuckDB looks for once pyarrow is loaded (0.5 s), a third of
    a re-run's time at 100k files."""
    folder = runs_folder(tmp_path / "runs", 20)
    db = tmp_path / "s.duckdb"
    with open_store(db) as store:
        store.ingest([folder])
    script = (
        "import sys\n"
        "from tracelab.store import open_store\n"
        f"with open_store({str(db)!r}) as store:\n"
        f"    report = store.ingest([{str(folder)!r}])\n"
        "print(report.count('already-ingested'), 'pyarrow' in sys.modules, 'pandas' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["20", "False", "False"]
