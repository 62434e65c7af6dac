"""Errors that were tracebacks: an unwritable output, a bad memory limit, hostile suite values,
exotic column types and a logging sink are each one line (issue 14, item 8).
"""
from __future__ import annotations

import json

import pytest

from tests.reliability.support import SUITE, one_line_error, run_cli, suite_file, tracelab
from tracelab.store import open_store


def test_an_unwritable_output_is_a_one_line_error_before_any_work(tmp_path, sample_store):
    missing = tmp_path / "no-such-folder" / "report.xml"
    for args in (["check", str(SUITE), "--format", "junit", "-o", str(missing)],
                 ["sql", "SELECT 1", "-o", str(missing)], ["cover", str(SUITE), "-o", str(missing)],
                 ["lint", str(SUITE), "-o", str(missing)]):
        code, out, err = run_cli(*args, "--store", str(sample_store))
        assert (code, out) == (2, "") and one_line_error(err), (args, err)
    with open_store(sample_store, read_only=True) as opened:
        assert opened.sql("SELECT count(*) FROM check_runs").item() == 0  # refused before checking


def test_a_bad_memory_limit_is_a_one_line_error(sample_store, monkeypatch):
    monkeypatch.setenv("TRACELAB_MEMORY_LIMIT", "abc")
    code, out, err = run_cli("info", "--store", str(sample_store))
    assert (code, out) == (2, "") and one_line_error(err), err
    assert "TRACELAB_MEMORY_LIMIT='abc' is not a memory size" in err


@pytest.mark.parametrize(("assertion", "expected"), [
    ("{type: trace_max_steps, max: 99999999999999999999999}", "must be at most 9,223,372,036,854,775,807"),
    ("{type: trace_must_call_tool, tool: t, max_calls: 18446744073709551616}", "must be at most"),
    ("{type: sequence_valid, rules: [{type: after, trigger: a, then: b, within: 99999999999999999999}]}",
     "must be at most"),
    ("{type: retrieval_top, ids: [a], k: 99999999999999999999}", "must be at most"),
    ('{type: output_contains, value: "\\uD800"}', "lone surrogate"),
    ('{type: args_valid, tool: t, schema: {$file: "a\\0b"}}', "the path holds a NUL character"),
    ('{type: args_valid, tool: t, schema: {$file: "loop1"}}', "cannot be resolved (a symlink loop?)"),
])
def test_hostile_suite_values_are_one_line_suite_errors(tmp_path, sample_store, assertion, expected):
    (tmp_path / "loop1").symlink_to(tmp_path / "loop2")
    (tmp_path / "loop2").symlink_to(tmp_path / "loop1")
    suite = suite_file(tmp_path, f"- {assertion}")
    code, out, err = run_cli("check", str(suite), "--store", str(sample_store), "--no-save")
    assert (code, out) == (2, "") and one_line_error(err), err
    assert expected in err


@pytest.mark.parametrize("query", [
    "SELECT 'a\\x00b'::BLOB AS b, 'x' AS s", "SELECT 1::VARIANT AS v",
    "SELECT * FROM (VALUES ('infinity'::TIMESTAMP), ('2024-05-01 10:00'::TIMESTAMP)) v(t)",
    "SELECT '-infinity'::DATE AS d", "SELECT 'infinity'::TIMESTAMPTZ AS t"])
@pytest.mark.parametrize("fmt", ["json", "csv", "table"])
def test_sql_writes_every_column_type_in_every_format(sample_store, query, fmt):
    code, out, err = run_cli("sql", query, "--store", str(sample_store), "--format", fmt)
    assert (code, err) == (0, ""), err
    if fmt == "json":
        rows = json.loads(out)
        assert rows and all(value is not None for row in rows for value in row.values())
    if "infinity" in query:
        assert "infinity" in out


def test_sql_cannot_configure_a_file_log_and_abort(tmp_path, sample_store):
    done = tracelab("sql", f"CALL enable_logging(storage='file', storage_path='{tmp_path}/logs')",
                    "--store", str(sample_store))
    assert (done.returncode, done.stdout) == (2, "") and one_line_error(done.stderr), done.stderr
    assert "the configuration has been locked" in done.stderr
    assert not (tmp_path / "logs").exists()


