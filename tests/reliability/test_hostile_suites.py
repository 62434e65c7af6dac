"""Hostile suites and queries let nothing through: `tracelab sql` neither writes nor touches a
file without --write, a `where` cannot write, and a pathological regex still finishes.

Listed in README "Guarantees" and proved elsewhere: suite strings and tool names are data
(tests/suite/test_engine_safety.py), `where` refusals, remote `$ref` and `$file` escapes
(tests/suite/test_load.py).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import episode
from tests.reliability.support import run_cli, tracelab
from tracelab.store import open_store

SECRET = "root:x:0:0:do-not-read"

# (statement, the statement type a read-only store refuses, or None when DuckDB's own
# "external access disabled" setting is what stops it)
STATEMENTS = [
    ("COPY episodes TO '{out}'", "COPY"),
    ("COPY (SELECT 1) TO '{out}' (FORMAT parquet)", "COPY"),
    ("ATTACH '{out}' AS other", "ATTACH"),
    ("INSERT INTO episodes (episode_id, tools_declared, n_steps, content_hash) VALUES ('x', false, 0, 'h')",
     "INSERT"),
    ("CREATE TABLE t AS SELECT 1", "CREATE"),
    ("CREATE TEMP TABLE t AS SELECT 1", "CREATE"),
    ("SELECT 1; DROP TABLE steps", "DROP"),
    ("EXPORT DATABASE '{folder}'", "EXPORT"),
    ("INSTALL httpfs", "LOAD"),
    ("LOAD httpfs", "LOAD"),
    ("SELECT * FROM read_csv('{secret}')", None),
    ("SELECT * FROM read_text('{secret}')", None),
    ("SELECT count(*) FROM glob('{folder}/*')", None),
]


@pytest.fixture(scope="module")
def stores(tmp_path_factory) -> dict[str, Path]:
    """A DuckDB store with two episodes, and its Parquet export."""
    folder = tmp_path_factory.mktemp("stores")
    traces = folder / "t.jsonl"
    traces.write_text("".join(json.dumps(episode(i, {"kind": "user", "text": "hi"})) + "\n" for i in "ab"))
    with open_store(folder / "s.duckdb") as store:
        store.ingest([traces])
        store.export(folder / "pq")
    return {"duckdb": folder / "s.duckdb", "parquet": folder / "pq"}


@pytest.mark.parametrize("kind", ["duckdb", "parquet"])
@pytest.mark.parametrize(("template", "refused_type"), STATEMENTS, ids=[s for s, _ in STATEMENTS])
def test_sql_cannot_write_or_touch_files_without_write(tmp_path, stores, kind, template, refused_type):
    secret = tmp_path / "secret.csv"
    secret.write_text(f"line\n{SECRET}\n")
    out = tmp_path / "out.file"
    query = template.format(out=out, secret=secret, folder=tmp_path)

    code, stdout, stderr = run_cli("sql", query, "--store", str(stores[kind]))

    if refused_type is None:
        target = secret if "glob" not in query else f"{tmp_path}/*"
        expected = (f'error: SQL error: Permission Error: Cannot access file "{target}" - file system '
                    "operations are disabled by configuration\n")
    elif kind == "parquet":
        expected = f"error: {refused_type} statements are refused: a Parquet store is read-only\n"
    else:
        expected = (f"error: {refused_type} statements are refused: the store is open read-only "
                    "(`tracelab sql --write` allows writes)\n")
    assert (code, stdout, stderr) == (2, "", expected)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["secret.csv"]  # nothing written
    with open_store(stores[kind]) as store:
        assert store.sql("SELECT count(*) FROM episodes").item() == 2
        assert store.sql("SELECT count(*) FROM steps").item() == 2


def test_sql_write_is_the_switch(tmp_path, stores):
    """The refusals above come from the missing --write, not from a broken COPY."""
    writable = tmp_path / "w.duckdb"
    writable.write_bytes(stores["duckdb"].read_bytes())
    out = tmp_path / "out.csv"

    code, _, stderr = run_cli("sql", f"COPY (SELECT episode_id FROM episodes ORDER BY 1) TO '{out}'",
                              "--store", str(writable), "--write")

    assert (code, stderr) == (0, "")
    assert out.read_text() == "episode_id\na\nb\n"


WRITING_WHERES = [
    ("1=1; DROP TABLE steps", "must be one boolean expression; a second statement is not allowed"),
    ("true); DELETE FROM steps; SELECT (1", "must be one boolean expression; a second statement is not allowed"),
    ("episode_id IN (SELECT episode_id FROM episodes WHERE 1=1); DROP TABLE steps",
     "must be one boolean expression; a second statement is not allowed"),
    ("EXISTS (DELETE FROM steps RETURNING *)", 'not a valid SQL expression: syntax error at or near "DELETE"'),
    ("episode_id IN (WITH d AS (DELETE FROM steps RETURNING episode_id) SELECT * FROM d)",
     "subqueries are not allowed"),
    ("length(read_text('/etc/passwd')) > 0", "read_text() is a table function"),
    ("true -- \n) OR (SELECT count(*) FROM steps) > 0 OR (true", "subqueries are not allowed"),
]


@pytest.mark.parametrize(("where", "reason"), WRITING_WHERES, ids=[w for w, _ in WRITING_WHERES])
def test_a_where_that_would_write_is_refused_and_writes_nothing(tmp_path, stores, where, reason):
    store = tmp_path / "s.duckdb"
    store.write_bytes(stores["duckdb"].read_bytes())
    suite = tmp_path / "suite.yaml"
    suite.write_text("suite: hostile\nmin_cases: 1\ncases:\n  - id: c\n    select:\n      where: "
                     + json.dumps(where) + "\n    expect: {must_not_leak: [secret]}\n")

    code, stdout, stderr = run_cli("check", str(suite), "--store", str(store))

    assert (code, stdout) == (2, "")
    assert stderr.startswith(f"error: {suite}:6: case 'c': key 'select.where': ")
    assert reason in stderr and stderr.count("\n") == 1
    with open_store(store, read_only=True) as opened:
        assert opened.sql("SELECT count(*) FROM steps").item() == 2
        assert opened.sql("SELECT count(*) FROM check_runs").item() == 0


def test_a_pathological_regex_finishes(tmp_path):
    """`(a+)+$` backtracks exponentially in Python's `re` on 'aaaa…b'; RE2 is linear."""
    text = "a" * 100_000 + "b"
    (tmp_path / "t.jsonl").write_text(json.dumps(episode(
        "r1", {"kind": "tool_call", "name": "lookup", "args": {"q": text}}, output=text)) + "\n")
    (tmp_path / "suite.yaml").write_text("""\
suite: regex
min_cases: 1
cases:
  - id: c
    select: {}
    expect: {must_not_leak: [secret]}
    assertions:
      - {type: output_not_matches, id: no-runaway, pattern: '(a+)+$'}
      - {type: trace_must_not_call_tool, id: no-runaway-args, tool: {tool: lookup, args_match: {q: '(a+)+$'}}}
      - {type: output_matches, id: ends-in-b, pattern: '(a+)+b$'}
""")
    assert tracelab("ingest", "t.jsonl", "-q", cwd=tmp_path).returncode == 0

    result = tracelab("check", "suite.yaml", "--format", "json", "--all-results", "--no-save", cwd=tmp_path,
                      timeout=300)

    assert result.returncode == 0, result.stderr
    verdicts = {r["assertion"]: r["passed"] for r in json.loads(result.stdout)["results"]}
    assert verdicts == {"no-runaway": True, "no-runaway-args": True, "ends-in-b": True,
                        "must_not_leak[0]": True, "undeclared_writes": True}
