"""One SQL definition per domain rule (issue 24): the store's macros (sql/store/views/rules.sql) are
what the views and the checks both call, and an earlier store gains them when opened."""
from __future__ import annotations

import re

import duckdb

from tests.suite.engine_support import call, ep
from tracelab.sqlfiles import sql_dir
from tracelab.store import open_store, store_macros

RULES = sql_dir() / "store" / "views" / "rules.sql"
# each rule, as its expression would read if it were written out again
WRITTEN_OUT = {
    "is_executed_write": r"effect\s*=\s*'write'\s+AND\s+\w*\.?status\s*=\s*'ok'",
    "resolved_effect": r"coalesce\((\w+\.)?override,|coalesce\(\w+\.effect, \w+\.effect\)",
    "tool_availability_of": r"THEN\s+'unavailable'",
    "json_tokens": r"json_tree\(|regexp_extract_all\(",
}


def sql_files() -> dict[str, str]:
    """The SQL of the store's views and of the checks: the two layers that apply these rules."""
    return {str(p.relative_to(sql_dir())): p.read_text(encoding="utf-8")
            for layer in ("store", "engine") for p in (sql_dir() / layer).rglob("*.sql")
            if p != RULES}


def test_each_rule_is_written_once_and_called_by_the_views_and_the_checks():
    files = sql_files()
    for macro, pattern in WRITTEN_OUT.items():
        assert re.search(pattern, RULES.read_text(encoding="utf-8")), macro
        copies = [name for name, text in files.items() if re.search(pattern, text, re.I)]
        assert copies == [], f"{macro} written out again in {copies}"
        callers = {name.split("/")[0] for name, text in files.items() if f"{macro}(" in text}
        assert callers == {"store", "engine"}, (macro, callers)


def test_an_earlier_store_gains_the_rules_when_opened_read_only(tmp_path, write_jsonl):
    db = tmp_path / "old.duckdb"
    path = write_jsonl([ep("r1", *call("a", effect="write"), *call("b", status="error", effect="write"),
                           tools=[{"name": "a"}, {"name": "c"}])])
    with open_store(db) as store:
        store.ingest([path])
    con = duckdb.connect(str(db))  # what an earlier tracelab wrote: views written out, no macros
    con.execute("DROP MACRO TABLE tool_availability")
    con.execute("DROP VIEW executed_writes")
    con.execute("CREATE VIEW executed_writes AS SELECT * FROM calls WHERE effect = 'write' AND status = 'ok'")
    for macro in ("is_executed_write", "tool_availability_of", "resolved_effect"):
        con.execute(f"DROP MACRO {macro}")
    con.close()
    with open_store(db, read_only=True) as store:
        names = set(store.sql("SELECT function_name FROM duckdb_functions() WHERE NOT internal")
                    ["function_name"])
        assert store_macros() <= names
        assert store.sql("SELECT tool_name FROM executed_writes").rows() == [("a",)]
        availability = "SELECT availability FROM tool_availability(?)"
        assert [store.sql(availability, [t]).item() for t in ("a", "c", "d")] == [
            "available", "available", "unavailable"]
        view = store.sql("SELECT sql FROM duckdb_views() WHERE view_name = 'executed_writes'").item()
        assert "is_executed_write(" in view
