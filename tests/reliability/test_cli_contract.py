"""The error contract of the commands (issue 29, "Tracebacks and wrong exits", "Wrong messages
and output"): hostile stored text, hostile option and environment values and a `where` that
expands end in one `error:` line or print correctly, never a traceback."""
from __future__ import annotations

import json
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.reliability.support import run_cli
from tracelab.store import open_store

SUITE = REPO / "sample_traces" / "suite.yaml"
MARKUP = "[/]"


def one_line_error(err: str) -> bool:
    return err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err


def suite_text(*, suite: str = "s", case: str = "c", category: str = "", where: str = "") -> str:
    return (f"suite: {json.dumps(suite)}\nmin_cases: 1\ncases:\n  - id: {json.dumps(case)}\n"
            + (f"    category: {json.dumps(category)}\n" if category else "")
            + "    expect: {must_not_leak: [never-there]}\n"
            + (f"    select: {{where: {json.dumps(where)}}}\n" if where else "")
            + "    assertions:\n      - type: tool_blocklist\n        blocked: [rm_rf]\n")


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("contract")
    traces = folder / "t.jsonl"
    runs = [
        {"episode_id": "m1", "started_at": "0000-01-01T00:00:00Z", "ended_at": "9999-12-31T23:59:59.999999Z",
         "steps": [{"kind": "tool_call", "name": MARKUP, "call_id": "c1", "args": {"a": MARKUP}},
                   {"kind": "tool_call", "name": "rm_rf", "call_id": "c2", "args": {}}]},
    ]
    traces.write_text("".join(json.dumps(r) + "\n" for r in runs), encoding="utf-8")
    path = folder / "s.duckdb"
    with open_store(path) as opened:
        opened.ingest([traces])
    return path


@pytest.mark.parametrize("command", [("show", "m1"), ("effects", "unknown"), ("sql", "SELECT tool_name FROM calls")],
                         ids=["show", "effects unknown", "sql"])
def test_rich_markup_in_a_stored_tool_name_is_printed_as_text(store, command):
    code, out, err = run_cli(*command, "--store", str(store))
    assert (code, err) == (0, "")
    assert MARKUP in out


def test_rich_markup_in_a_declared_pattern_is_listed_as_text(tmp_path, store):
    copy = tmp_path / "s.duckdb"
    copy.write_bytes(store.read_bytes())
    assert run_cli("effects", "set", f"{MARKUP}=read", "--store", str(copy))[0] == 0
    code, out, err = run_cli("effects", "list", "--store", str(copy))
    assert (code, err) == (0, "") and MARKUP in out


def test_sql_prints_the_first_and_last_instants_as_themselves(store):
    code, out, err = run_cli("sql", "SELECT started_at, ended_at, started_at::DATE AS day FROM episodes",
                             "--store", str(store))
    assert (code, err) == (0, "")
    assert "0000-01-01 00:00:00" in out and "9999-12-31 23:59:59.999999" in out and "0000-01-01 " in out
    assert "infinity" not in out


def test_sql_still_prints_infinity_as_infinity(store):
    code, out, _ = run_cli("sql", "SELECT 'infinity'::TIMESTAMP AS a, '-infinity'::DATE AS b", "--store", str(store))
    assert code == 0 and "infinity" in out and "-infinity" in out


@pytest.mark.parametrize("field", ["suite", "case", "category"])
@pytest.mark.parametrize("char", ["\ufffe", "\uffff"], ids=["FFFE", "FFFF"])
def test_junit_is_well_formed_when_a_suite_id_holds_an_xml_invalid_character(tmp_path, store, field, char):
    suite = tmp_path / "s.json"
    values = {"suite": "s", "case": "c", "category": "k"} | {field: f"x{char}y"}
    text = suite_text(**values)
    import yaml

    suite.write_text(json.dumps(yaml.safe_load(text)), encoding="utf-8")
    code, out, err = run_cli("check", str(suite), "--store", str(store), "--format", "junit", "--no-save")
    assert code == 1, err
    root = ET.fromstring(out)  # raises on a character XML 1.0 forbids
    assert f"x\\u{ord(char):04x}y" in ET.tostring(root, encoding="unicode")


def test_a_where_that_expands_to_several_columns_is_a_suite_error(tmp_path, store):
    suite = tmp_path / "s.yaml"
    suite.write_text(suite_text(where="COLUMNS('.*') IS NOT NULL"), encoding="utf-8")
    code, _, err = run_cli("check", str(suite), "--store", str(store), "--no-save")
    assert code == 2 and one_line_error(err), err
    assert "select.where" in err and "COLUMNS" in err


def test_a_where_with_columns_of_one_column_still_selects(tmp_path, store):
    suite = tmp_path / "s.yaml"
    suite.write_text(suite_text(where="COLUMNS('^episode_id$') = 'm1'"), encoding="utf-8")
    code, out, err = run_cli("check", str(suite), "--store", str(store), "--no-save")
    assert code == 1 and "1 run" in out, (out, err)


def test_a_missing_suite_is_one_error_line_without_click_usage(tmp_path, store):
    for command in ("check", "cover", "lint"):
        code, _, err = run_cli(command, str(tmp_path / "nope.yaml"), "--store", str(store))
        assert code == 2 and one_line_error(err), (command, err)
        assert "Usage:" not in err and "nope.yaml" in err


def test_the_errors_module_says_a_missing_path_exits_2(tmp_path):
    from tracelab import errors

    code, _, err = run_cli("ingest", str(tmp_path / "nope.jsonl"), "--store", str(tmp_path / "s.duckdb"))
    assert code == 2 and one_line_error(err), err
    assert "a missing path" not in (errors.DataError.__doc__ or "")
    assert "a missing path" in (errors.UsageError.__doc__ or "")


def test_view_max_runs_past_any_integer_is_one_line_or_all_runs(tmp_path, store):
    suite = tmp_path / "s.yaml"
    suite.write_text(suite_text(), encoding="utf-8")
    copy = tmp_path / "s.duckdb"
    copy.write_bytes(store.read_bytes())
    run_cli("check", str(suite), "--store", str(copy))
    code, out, err = run_cli("view", "--store", str(copy), "--max-runs", "99999999999999999999",
                             "-o", str(tmp_path / "r.html"))
    assert (code, err) == (0, ""), err
    assert (tmp_path / "r.html").is_file()


def test_view_reports_an_unwritable_output_before_any_work(tmp_path, store, monkeypatch):
    import tracelab.view

    def refuse(*args, **kwargs):
        raise AssertionError("the report was built before the output was checked")

    monkeypatch.setattr(tracelab.view, "build_report", refuse)
    code, _, err = run_cli("view", "--store", str(store), "-o", str(tmp_path / "no" / "r.html"))
    assert code == 2 and one_line_error(err), err


@pytest.mark.parametrize("value", ["-5GB", "-1", "-1KB"])
def test_a_negative_memory_limit_is_refused(store, monkeypatch, value):
    monkeypatch.setenv("TRACELAB_MEMORY_LIMIT", value)
    code, _, err = run_cli("sql", "SELECT 1", "--store", str(store))
    assert code == 2 and one_line_error(err), err
    assert "TRACELAB_MEMORY_LIMIT" in err


def test_workers_past_a_c_int_are_refused(monkeypatch):
    from tracelab.errors import UsageError
    from tracelab.ingest.parse_pool import worker_count

    monkeypatch.setenv("TRACELAB_WORKERS", "99999999999999999999")
    with pytest.raises(UsageError, match="TRACELAB_WORKERS"):
        worker_count()


def test_show_full_of_one_large_step_prints_it_whole_without_layout(tmp_path, monkeypatch):
    import tracelab.cli.show as show_module

    monkeypatch.setattr(show_module, "LAYOUT_LIMIT", 1000)
    text = " ".join(f"w{i}" for i in range(200_000))  # 1.4 MB: minutes in a laid-out table cell
    traces = tmp_path / "t.jsonl"
    traces.write_text(json.dumps({"episode_id": "big", "steps": [
        {"kind": "assistant", "text": text}, {"kind": "tool_call", "name": "t", "args": {"a": "b"}}]}) + "\n")
    with open_store(tmp_path / "s.duckdb") as opened:
        opened.ingest([traces])
    clock = time.perf_counter()
    code, out, err = run_cli("show", "big", "--full", "--store", str(tmp_path / "s.duckdb"))
    assert (code, err) == (0, "")
    assert time.perf_counter() - clock < 5
    assert text in out  # whole, on its own lines, not folded into a cell
    assert '{"a":"b"}' in out


def test_show_full_still_lays_out_small_steps(tmp_path, store):
    code, out, _ = run_cli("show", "m1", "--full", "--store", str(store))
    assert code == 0 and "rm_rf" in out and "below" not in out

