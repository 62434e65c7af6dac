"""Opening stores: missing, corrupt, wrong version, locked, Parquet folders."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import duckdb
import pytest

from tests.conftest import episode
from tracelab.errors import Interrupted, StoreError, UsageError
from tracelab.store import open_store


def test_missing_store_for_reading_is_a_clear_error(tmp_path):
    with pytest.raises(StoreError, match=r"no store at .*nope.duckdb; run `tracelab ingest` first"):
        open_store(tmp_path / "nope.duckdb", read_only=True)


def test_corrupt_store(tmp_path):
    path = tmp_path / "bad.duckdb"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="cannot be opened as a tracelab store"):
        open_store(path)


def test_unknown_schema_version(tmp_path):
    path = tmp_path / "s.duckdb"
    open_store(path).close()
    con = duckdb.connect(str(path))
    con.execute("UPDATE tracelab_meta SET value = '99' WHERE key = 'schema_version'")
    con.close()
    with pytest.raises(StoreError, match="schema version 99; this tracelab reads version 1"):
        open_store(path)


def test_plain_duckdb_file_is_not_a_store(tmp_path):
    path = tmp_path / "other.duckdb"
    duckdb.connect(str(path)).close()
    with pytest.raises(StoreError, match="not a tracelab store"):
        open_store(path, read_only=True)


def test_store_locked_by_another_process_names_the_pid(tmp_path):
    path = tmp_path / "s.duckdb"
    open_store(path).close()
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import duckdb, sys, time
            con = duckdb.connect({str(path)!r})
            print('ready', flush=True)
            sys.stdin.read()
        """)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "ready"
        with pytest.raises(StoreError, match=rf"locked by process {holder.pid}"):
            open_store(path)
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)


def test_parquet_export_opens_as_read_only_store(tmp_path, write_jsonl):
    with open_store(tmp_path / "s.duckdb") as store:
        store.ingest([write_jsonl([episode("a", {"kind": "tool_call", "name": "t", "args": {"k": "v"}}),
                                   episode("b", tools=[])])])
        store.export(tmp_path / "pq")

    with open_store(tmp_path / "pq") as pq:
        assert pq.read_only and pq.parquet
        assert pq.sql("SELECT count(*) FROM episodes").item() == 2
        assert pq.sql("SELECT tool_name, args FROM tool_calls").rows() == [("t", '{"k":"v"}')]
        assert pq.sql("SELECT count(*) FROM tool_definitions").item() == 0
        assert pq.sql("SELECT text FROM transcript WHERE origin = 'step.data'").item() == "v"
        with pytest.raises(StoreError, match="a Parquet store is read-only"):
            pq.ingest([tmp_path])
    assert sorted(os.listdir(tmp_path / "pq")) == [
        "episodes", "quarantine", "sources", "steps", "tool_calls", "tool_definitions", "tool_effects"]


def _export_store(tmp_path, write_jsonl, name: str, ids: list[str]):
    store = open_store(tmp_path / f"{name}.duckdb")
    store.ingest([write_jsonl([episode(i) for i in ids], f"{name}.jsonl")])
    return store


def test_export_over_an_earlier_export_never_mixes_the_two(tmp_path, write_jsonl):
    target = tmp_path / "pq"
    with _export_store(tmp_path, write_jsonl, "big", [f"b{i}" for i in range(84)]) as big:
        big.export(target)
    with _export_store(tmp_path, write_jsonl, "small", ["s1", "s2", "s3"]) as small:
        with pytest.raises(UsageError, match="is not empty; export into a new or empty folder, or pass "
                                             "--overwrite"):
            small.export(target)
        with open_store(target) as pq:
            assert pq.sql("SELECT count(*) FROM episodes").item() == 84  # refused: the old one intact
        small.export(target, overwrite=True)

    with open_store(target) as pq:
        assert sorted(pq.sql("SELECT episode_id FROM episodes").rows()) == [("s1",), ("s2",), ("s3",)]
    assert sorted(os.listdir(tmp_path)) == sorted(["big.duckdb", "big.jsonl", "pq", "small.duckdb", "small.jsonl"])


def test_export_overwrite_refuses_a_folder_that_is_not_an_export(tmp_path, write_jsonl):
    target = tmp_path / "mine"
    target.mkdir()
    (target / "notes.txt").write_text("keep me")
    with _export_store(tmp_path, write_jsonl, "s", ["a"]) as store:
        with pytest.raises(UsageError, match=r"holds files that are not a tracelab export \(notes.txt\)"):
            store.export(target, overwrite=True)
    assert (target / "notes.txt").read_text() == "keep me"


def test_an_interrupted_export_leaves_the_earlier_export(tmp_path, write_jsonl, monkeypatch):
    target = tmp_path / "pq"
    with _export_store(tmp_path, write_jsonl, "old", ["o1", "o2"]) as old:
        old.export(target)
    with _export_store(tmp_path, write_jsonl, "new", ["n1"]) as new:
        written = []
        real = type(new)._write_parquet

        def interrupted_midway(self, out):
            written.append(out)
            real(self, out)
            raise KeyboardInterrupt  # Ctrl-C after the tables are written, before the swap

        monkeypatch.setattr(type(new), "_write_parquet", interrupted_midway)
        with pytest.raises(Interrupted, match=r"^interrupted: the export to .*pq was not written; the earlier "
                                              "export is as it was$"):
            new.export(target, overwrite=True)

    with open_store(target) as pq:
        assert sorted(pq.sql("SELECT episode_id FROM episodes").rows()) == [("o1",), ("o2",)]
    assert not written[0].exists()  # the half-written export beside it is gone
    assert Interrupted.exit_code == 130


FILE_READERS = ["SELECT content FROM read_text('{path}')", "SELECT * FROM read_csv('{path}')",
                "SELECT * FROM glob('{folder}/*')"]


@pytest.mark.parametrize("query", FILE_READERS)
def test_a_read_only_store_opened_from_python_touches_no_file(tmp_path, query):
    secret = tmp_path / "secret.csv"
    secret.write_text("line\nsk-live-0000\n")
    open_store(tmp_path / "s.duckdb").close()

    with open_store(tmp_path / "s.duckdb", read_only=True) as store:
        with pytest.raises(UsageError) as refused:
            store.sql(query.format(path=secret, folder=tmp_path))
        assert "file system operations are disabled by configuration" in str(refused.value)
        assert "sk-live" not in str(refused.value)
        assert store.sql("SELECT count(*) FROM episodes").item() == 0  # the store itself still reads


def test_a_writable_store_reads_files_and_a_read_only_one_exports_before_its_first_query(tmp_path):
    (tmp_path / "note.txt").write_text("hello")
    with open_store(tmp_path / "s.duckdb") as store:  # read-write: `tracelab sql --write`
        assert store.sql(f"SELECT content FROM read_text('{tmp_path / 'note.txt'}')").item() == "hello"

    with open_store(tmp_path / "s.duckdb", read_only=True) as store:
        assert store.export(tmp_path / "pq")["episodes"] == 0
        with pytest.raises(UsageError, match="file system operations are disabled"):
            store.sql(f"SELECT content FROM read_text('{tmp_path / 'note.txt'}')")


def test_a_parquet_store_exports_again_and_its_sql_still_reads_no_file(tmp_path, write_jsonl):
    """docs/cli.md §1: a Parquet store (an export, or one `ingest --engine spark` wrote) is
    exportable; from its first query on, its SQL touches no file."""
    with open_store(tmp_path / "s.duckdb") as store:
        store.ingest([write_jsonl([episode("a"), episode("b")])])
        store.export(tmp_path / "pq")
    with open_store(tmp_path / "pq") as pq:
        assert pq.export(tmp_path / "again")["episodes"] == 2
        assert pq.sql("SELECT count(*) FROM episodes").item() == 2
        with pytest.raises(UsageError, match="SQL error"):
            pq.sql(f"SELECT * FROM read_text('{tmp_path / 'again' / 'sources' / 'data.parquet'}')")
    with open_store(tmp_path / "again") as again:
        assert again.sql("SELECT count(*) FROM episodes").item() == 2


def test_a_store_whose_catalog_cannot_be_read_says_what_to_do(tmp_path):
    # damage met when a store opens reads as damage met later: named, with what to do next
    import duckdb

    from tracelab.errors import StoreError
    from tracelab.store import _schema

    class Damaged:
        def execute(self, *args: object) -> None:
            raise duckdb.IOException("Corrupt database file: computed checksum 1 does not match stored checksum 2")

    with pytest.raises(StoreError) as raised:
        _schema(Damaged(), tmp_path / "s.duckdb")  # type: ignore[arg-type]
    assert str(raised.value).startswith(f"{tmp_path / 's.duckdb'}: the store is damaged or unreadable (Corrupt")
    assert "restore it from a backup" in str(raised.value)
