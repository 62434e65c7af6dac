"""A damaged store: every command exits 3 with one line, and ingest refuses it before writing
(issue 14, item 6).
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest

from tests.conftest import episode
from tests.reliability.support import SAMPLES, SUITE, one_line_error, run_cli


def damage(store: Path, tables: tuple[str, ...], out: Path) -> Path:
    """A copy of `store` with bytes overwritten near the start of every data block of `tables`
    (where the data of a small store lies); the file's headers stay intact, so it still opens."""
    with duckdb.connect(str(store), read_only=True) as con:
        block_size = con.execute("SELECT block_size FROM pragma_database_size()").fetchone()[0]
        blocks = sorted({b for t in tables for (b,) in con.execute(
            f"SELECT DISTINCT block_id FROM pragma_storage_info('{t}') WHERE block_id >= 0").fetchall()})
    assert blocks
    shutil.copy(store, out)
    with out.open("r+b") as f:
        for block in blocks:
            f.seek(3 * 4096 + block * block_size + 100)
            f.write(b"\xde\xad\xbe\xef" * 64)
    return out


TABLES = ("episodes", "steps", "tool_calls", "tool_definitions", "quarantine", "sources")
COMMANDS = {
    "info": ["info"],
    "info json": ["info", "--format", "json"],
    "sql": ["sql", "SELECT * FROM steps"],
    "check": ["check", str(SUITE)],
    "check --no-save": ["check", str(SUITE), "--no-save"],
    "cover": ["cover", str(SUITE)],
    "lint": ["lint", str(SUITE)],
    "export": ["export", "{tmp}/exported"],
    "ingest": ["ingest", str(SAMPLES / "native"), "-q"],
}


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_on_a_damaged_store_exits_3_with_one_line(tmp_path, sample_store, command):
    store = damage(sample_store, TABLES, tmp_path / "damaged.duckdb")
    before = store.read_bytes()
    args = [a.format(tmp=tmp_path) for a in COMMANDS[command]]
    code, out, err = run_cli(*args, "--store", str(store))
    assert (code, out) == (3, "") and one_line_error(err), err
    assert err.startswith(f"error: {store}: the store is damaged or unreadable (Corrupt database file"), err
    assert "restore it from a backup, or ingest the traces into a new store" in err
    assert store.read_bytes() == before  # nothing written into it


def test_ingest_refuses_a_damaged_store_before_writing(tmp_path, sample_store):
    """Damage where an ingest never reads (the steps): it is still refused, and the file untouched."""
    store = damage(sample_store, ("steps",), tmp_path / "damaged.duckdb")
    before = store.read_bytes()
    new = tmp_path / "new.jsonl"
    new.write_text(json.dumps(episode("brand-new", {"kind": "user", "text": "hi"})) + "\n")
    code, out, err = run_cli("ingest", str(new), "--store", str(store), "-q")
    assert (code, out) == (3, "") and one_line_error(err), err
    assert err.startswith(f"error: {store}: the store is damaged or unreadable")
    assert store.read_bytes() == before and not Path(f"{store}.wal").exists()




def test_a_store_damaged_in_its_first_blocks_is_called_damaged_not_busy(tmp_path, sample_store):
    # DuckDB refuses to open it with "... checksum ... in block at location 4096": a damaged store
    # (exit 3, restore or re-ingest), not one locked by another process (wait and retry)
    broken = tmp_path / "broken.duckdb"
    shutil.copy(sample_store, broken)
    with broken.open("r+b") as f:
        f.seek(5000)
        f.write(b"garbage")
    code, _, err = run_cli("info", "--store", str(broken))
    assert code == 3 and one_line_error(err)
    assert "damaged" in err and "busy" not in err
