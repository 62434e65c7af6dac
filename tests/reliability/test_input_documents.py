"""Hostile input documents (issue 29, "Tracebacks and wrong exits"): a suite, an effects file, a
baseline or a query file nested 100,000 deep, endless (`/dev/zero`), or holding a character YAML
refuses, ends in one `error:` line that names the file, exit 2, never a traceback."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.reliability.support import run_cli
from tracelab.store import open_store

SUITE = REPO / "sample_traces" / "suite.yaml"
DEEP = 100_000


def one_line_error(err: str) -> bool:
    return err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("docs")
    traces = folder / "t.jsonl"
    traces.write_text(json.dumps({"episode_id": "e1", "steps": [
        {"kind": "tool_call", "tool": "get_user", "args": {"id": 1}}]}) + "\n", encoding="utf-8")
    path = folder / "s.duckdb"
    with open_store(path) as opened:
        opened.ingest([traces])
    return path


def nested(kind: str, depth: int = DEEP) -> str:
    """A document whose value under its key nests `depth` lists deep."""
    inner = "[" * depth + "]" * depth
    return f'{{"assertions": {inner}}}\n' if kind == "json" else f"assertions: {inner}\n"


def schema_suite(depth: int) -> str:
    schema = "{}"
    for _ in range(depth):
        schema = f'{{"type": "object", "properties": {{"a": {schema}}}}}'
    return textwrap.dedent(f"""\
        suite: s
        min_cases: 1
        cases:
          - id: c
            expect: {{must_not_leak: [never-there]}}
            assertions:
              - type: args_valid
                tool: get_user
                schema: {schema}
        """)


@pytest.mark.parametrize("kind", ["yaml", "json"])
def test_a_suite_nested_100000_deep_is_one_suite_error(tmp_path, store, kind):
    suite = tmp_path / f"deep.{kind}"
    suite.write_text(nested(kind), encoding="utf-8")
    code, _, err = run_cli("check", str(suite), "--store", str(store), "--no-save")
    assert code == 2 and one_line_error(err), err
    assert str(suite) in err and "nested" in err


def test_an_args_valid_schema_nested_100000_deep_is_one_suite_error(tmp_path, store):
    suite = tmp_path / "schema.yaml"
    suite.write_text(schema_suite(DEEP // 10), encoding="utf-8")
    code, _, err = run_cli("check", str(suite), "--store", str(store), "--no-save")
    assert code == 2 and one_line_error(err), err


def test_a_schema_nested_as_deep_as_allowed_still_checks(tmp_path, store):
    from tracelab.documents import MAX_DEPTH

    suite = tmp_path / "schema.yaml"
    suite.write_text(schema_suite(MAX_DEPTH // 2 - 4), encoding="utf-8")
    code, out, err = run_cli("check", str(suite), "--store", str(store), "--no-save")
    assert code in (0, 1) and "error" not in err, err


@pytest.mark.parametrize("kind", ["yaml", "json"])
def test_an_effects_file_nested_100000_deep_is_one_error(tmp_path, store, kind):
    effects = tmp_path / f"deep.{kind}"
    effects.write_text(nested(kind), encoding="utf-8")
    code, _, err = run_cli("effects", "import", str(effects), "--store", str(store))
    assert code == 2 and one_line_error(err), err


def test_a_baseline_nested_100000_deep_is_one_error(tmp_path, store):
    baseline = tmp_path / "deep.json"
    baseline.write_text(nested("json"), encoding="utf-8")
    code, _, err = run_cli("check", str(SUITE), "--store", str(store), "--no-save", "--baseline", str(baseline))
    assert code == 2 and one_line_error(err), err
    assert str(baseline) in err


@pytest.mark.parametrize("command", [
    ("effects", "import", "/dev/zero"),
    ("sql", "-f", "/dev/zero"),
    ("check", str(SUITE), "--no-save", "--baseline", "/dev/zero"),
], ids=["effects", "sql -f", "baseline"])
def test_an_endless_input_file_is_refused_past_a_size_cap(store, monkeypatch, command):
    import tracelab.limits

    monkeypatch.setattr(tracelab.limits, "MAX_DOCUMENT_BYTES", 1 << 16)
    code, _, err = run_cli(*command, "--store", str(store))
    assert code == 2 and one_line_error(err), err
    assert "/dev/zero" in err and "larger than" in err


@pytest.mark.parametrize("char", ["\x01", "\x7f", "\ufffe", "\uffff"], ids=["SOH", "DEL", "FFFE", "FFFF"])
@pytest.mark.parametrize("name", ["suite.yaml", "suite.json", "effects.yaml", "effects.json"])
def test_a_character_yaml_refuses_is_one_line_naming_file_and_position(tmp_path, store, char, name):
    path = tmp_path / name
    text = ('{"suite": "a' + char + '"}\n') if name.endswith(".json") else f'suite: "a{char}"\n'
    path.write_text(text, encoding="utf-8")
    command = ("effects", "import") if name.startswith("effects") else ("check",)
    code, _, err = run_cli(*command, str(path), "--store", str(store), *(() if command[0] == "effects" else
                                                                          ("--no-save",)))
    assert code == 2 and one_line_error(err), err
    assert str(path) in err, err
    if name.endswith(".yaml"):  # JSON allows U+FFFF in a string; its own errors name the line
        assert f"{path}:1: " in err and "character" in err, err


def test_a_missing_effects_file_says_effects_file(tmp_path, store):
    code, _, err = run_cli("effects", "import", str(tmp_path / "nope.yaml"), "--store", str(store))
    assert code == 2 and one_line_error(err), err
    assert "cannot read effects file" in err and "suite" not in err
