"""A DuckDB file that holds other tables is refused untouched, and a failed setup leaves no table
behind (issue 14, item 10).
"""
from __future__ import annotations

import duckdb

from tests.reliability.support import SAMPLES, one_line_error, run_cli


def test_a_foreign_duckdb_file_is_refused_and_left_untouched(tmp_path):
    other = tmp_path / "other.duckdb"
    with duckdb.connect(str(other)) as con:
        con.execute("CREATE TABLE invoices (id INTEGER)")
        con.execute("CREATE VIEW paid AS SELECT * FROM invoices")
    code, out, err = run_cli("ingest", str(SAMPLES / "native"), "--store", str(other), "-q")
    assert (code, out) == (3, "") and one_line_error(err), err
    assert "is a DuckDB database that is not a tracelab store (it holds invoices, paid)" in err
    with duckdb.connect(str(other), read_only=True) as con:
        assert con.execute("SELECT table_name FROM duckdb_tables() UNION ALL "
                           "SELECT view_name FROM duckdb_views() WHERE NOT internal ORDER BY 1").fetchall() == [
            ("invoices",), ("paid",)]


def test_a_failed_setup_leaves_no_table_behind(tmp_path, monkeypatch):
    import tracelab.store

    def failing(con, name):  # type: ignore[no-untyped-def]
        raise duckdb.IOException("disk full (simulated)")

    monkeypatch.setattr(tracelab.store, "run_script", failing)  # the views, after the tables
    store = tmp_path / "new.duckdb"
    code, _, err = run_cli("ingest", str(SAMPLES / "native"), "--store", str(store), "-q")
    assert code == 3 and "cannot be initialised: disk full (simulated)" in err
    with duckdb.connect(str(store), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM duckdb_tables()").fetchone() == (0,)


