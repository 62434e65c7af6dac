"""Tool effects (docs/trace-format.md §6): MCP annotations, the store's registry, the `calls` view,
the order of precedence, `tracelab effects`, export and earlier stores."""
from __future__ import annotations

import json

import duckdb
import pytest
from click.testing import CliRunner

from tests.suite.engine_support import Checker, call, ep, verdicts
from tracelab.cli import cli
from tracelab.errors import StoreError, UsageError
from tracelab.store import open_store


def _calls(store) -> dict[str, tuple[str | None, str | None]]:
    rows = store.sql("SELECT tool_name, effect, effect_source FROM calls ORDER BY call_index").rows()
    return {name: (effect, source) for name, effect, source in rows}


@pytest.fixture
def checker(store, tmp_path) -> Checker:
    return Checker(store, tmp_path)


# --- MCP annotations ------------------------------------------------------------------------

@pytest.mark.parametrize("annotations, expected", [
    ({"readOnlyHint": True}, "read"),
    ({"readOnlyHint": True, "destructiveHint": True}, "read"),
    ({"readOnlyHint": False}, "write"),
    ({"readOnlyHint": "true"}, "write"),   # JSON true only
    ({"readOnlyHint": 1}, "write"),
    ({"destructiveHint": False}, "write"),  # readOnlyHint absent: MCP's default, may modify
    ({}, "write"),
    (None, None),                           # null counts as absent
    ("read-only", None),                    # not an object: absent
    ([{"readOnlyHint": True}], None),
])
def test_annotations_are_a_recorded_effect(checker, store, annotations, expected):
    checker.ingest(ep("r1", *call("t"), tools=[{"name": "t", "annotations": annotations}]))
    assert store.sql("SELECT effect FROM tool_definitions").item() == expected
    assert _calls(store)["t"] == (expected, "definition" if expected else None)


def test_a_definitions_own_effect_wins_over_its_annotations(checker, store):
    checker.ingest(ep("r1", *call("t"), tools=[{"name": "t", "effect": "read", "annotations": {}}]))
    assert _calls(store)["t"] == ("read", "definition")
    assert store.sql("SELECT annotations FROM tool_definitions").item() == "{}"


@pytest.mark.parametrize("fmt, record", [
    ("openai-chat", {"messages": [{"role": "user", "content": "hi"}], "tools": [
        {"type": "function", "function": {"name": "wipe", "parameters": {"type": "object"},
                                          "annotations": {"destructiveHint": True}}},
        {"type": "function", "function": {"name": "look"}, "annotations": {"readOnlyHint": True}}]}),
    ("anthropic", {"messages": [{"role": "user", "content": "hi"}], "tools": [
        {"name": "wipe", "input_schema": {"type": "object"}, "annotations": {}},
        {"name": "look", "input_schema": {"type": "object"}, "annotations": {"readOnlyHint": True}}]}),
])
def test_adapters_carry_annotations(store, tmp_path, fmt, record):
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    report = store.ingest([path], format=fmt)
    assert report.added == 1, report
    assert dict(store.sql("SELECT name, effect FROM tool_definitions").rows()) == {"wipe": "write", "look": "read"}


def test_otlp_definitions_carry_annotations():
    from tracelab.formats.otlp import definitions

    tools = definitions(json.dumps([{"type": "function", "name": "look", "annotations": {"readOnlyHint": True}}]),
                        "gen_ai.tool.definitions")
    assert tools == [{"name": "look", "annotations": {"readOnlyHint": True}}]


# --- the registry and the `calls` view ---------------------------------------------------------

def test_effect_source_of_each_level(checker, store):
    checker.ingest(ep("r1", *call("stepped", effect="write"), *call("defined"), *call("declared"),
                      *call("unknown"), tools=[{"name": "defined", "effect": "read"}]))
    store.effects.set({"declared": "write", "stepped": "read", "defined": "write"})
    assert _calls(store) == {"stepped": ("write", "step"), "defined": ("read", "definition"),
                             "declared": ("write", "registry"), "unknown": (None, None)}
    # the table keeps what the run recorded
    assert dict(store.sql("SELECT tool_name, effect FROM tool_calls").rows())["declared"] is None


def test_exact_name_first_then_the_first_glob_in_added_order(checker, store):
    checker.ingest(ep("r1", *call("update_user"), *call("update_flag"), *call("upload")))
    store.effects.set({"update_*": "write"})
    store.effects.set({"up*": "read", "update_flag": "read"})
    assert _calls(store) == {"update_user": ("write", "registry"), "update_flag": ("read", "registry"),
                             "upload": ("read", "registry")}
    store.effects.set({"update_*": "read"})  # keeps its place, takes the new effect
    assert _calls(store)["update_user"] == ("read", "registry")


def test_glob_syntax_is_the_suites(checker, store):
    # no escape character, an unclosed `[` is a literal, `_` and `%` are not wildcards
    checker.ingest(ep("r1", *call("a[b"), *call("a_c"), *call("abc")))
    store.effects.set({"a[b": "write", "a_c": "write"})
    assert _calls(store) == {"a[b": ("write", "registry"), "a_c": ("write", "registry"), "abc": (None, None)}


def test_a_declaration_counts_at_once_in_executed_writes(checker, store):
    checker.ingest(ep("r1", *call("send_money"), *call("send_money", status="error"), *call("get_balance")))
    assert store.sql("SELECT count(*) FROM executed_writes").item() == 0
    store.effects.set({"send_*": "write"})
    assert store.sql("SELECT tool_name, status FROM executed_writes").rows() == [("send_money", "ok")]
    assert store.sql("SELECT availability FROM tool_availability('send_money')").item() == "available"
    store.effects.unset(["send_*"])
    assert store.sql("SELECT count(*) FROM executed_writes").item() == 0


def test_unknown_lists_most_called_first(checker, store):
    checker.ingest(ep("r1", *call("a"), *call("b"), *call("b")), ep("r2", *call("b"), *call("c", effect="read")))
    assert store.effects.unknown().rows() == [("b", 3, 2), ("a", 1, 1)]
    assert store.effects.unknown_calls() == 4


# --- precedence at check time ------------------------------------------------------------------

NO_WRITE = """\
- id: c
  expect: {must_not_write: [send]}
"""


def test_recorded_effect_wins_over_the_registry_and_the_suite_over_both(checker, store):
    checker.ingest(ep("recorded-read", *call("send", effect="read")), ep("unrecorded", *call("send")))
    store.effects.set({"send": "write"})
    # registry: fills in only where the run recorded nothing
    result = checker.check(NO_WRITE)
    assert {k: v[0] for k, v in verdicts(result, "must_not_write[0]").items()} == {
        "recorded-read": True, "unrecorded": False}
    # the suite's override wins over both, at check time only
    result = checker.check(NO_WRITE, head="tools: {send: read}\n")
    assert {k: v[0] for k, v in verdicts(result, "must_not_write[0]").items()} == {
        "recorded-read": True, "unrecorded": True}
    result = checker.check(NO_WRITE, head='tools: {"s*": write}\n')
    assert {k: v[0] for k, v in verdicts(result, "must_not_write[0]").items()} == {
        "recorded-read": False, "unrecorded": False}


def test_the_registry_decides_offered_tools_for_exercise(checker, store):
    # declared tools, never called: the registry's `read` makes must_not_write not exercised
    checker.ingest(ep("r1", *call("other"), tools=[{"name": "other"}, {"name": "send"}]))
    assert verdicts(checker.check(NO_WRITE), "must_not_write[0]")["r1"][1] == "unknown"
    store.effects.set({"send": "read"})
    assert verdicts(checker.check(NO_WRITE), "must_not_write[0]")["r1"][1] == "no"
    store.effects.set({"send": "write"})
    assert verdicts(checker.check(NO_WRITE), "must_not_write[0]")["r1"][:2] == (True, "yes")


def test_undeclared_writes_see_the_registry(checker, store):
    checker.ingest(ep("r1", *call("refund")))
    assert verdicts(checker.check("- id: c\n"), "undeclared_writes")["r1"][:2] == (True, "unknown")
    store.effects.set({"refund": "write"})
    passed, exercised, reason = verdicts(checker.check("- id: c\n"), "undeclared_writes")["r1"]
    assert (passed, exercised) == (False, "yes") and '"refund"' in reason


# --- the Python API's errors ---------------------------------------------------------------------

def test_set_checks_every_pair_before_writing(store):
    with pytest.raises(UsageError, match=r'"x": the effect must be read or write'):
        store.effects.set({"ok": "write", "x": "delete"})
    with pytest.raises(UsageError, match="non-empty string"):
        store.effects.set({"": "write"})
    assert store.effects.list().height == 0


def test_unset_is_all_or_nothing(store):
    store.effects.set({"a": "write", "b": "read"})
    with pytest.raises(UsageError, match=r'not declared: "c"'):
        store.effects.unset(["a", "c"])
    assert store.effects.list()["pattern"].to_list() == ["a", "b"]


# --- the command ------------------------------------------------------------------------------

def test_effects_command_round_trip(tmp_path, write_jsonl):
    db = str(tmp_path / "s.duckdb")
    runner = CliRunner()
    path = write_jsonl([ep("r1", *call("send_money"), *call("get_balance"), *call("get_balance"))])
    assert runner.invoke(cli, ["ingest", "--store", db, str(path)]).exit_code == 0
    unknown = runner.invoke(cli, ["effects", "unknown", "--store", db, "--format", "json"])
    assert json.loads(unknown.output) == [{"tool_name": "get_balance", "calls": 2, "runs": 1},
                                          {"tool_name": "send_money", "calls": 1, "runs": 1}]
    mapping = tmp_path / "effects.yaml"
    mapping.write_text("send_*: write\nget_balance: read\n", encoding="utf-8")
    done = runner.invoke(cli, ["effects", "import", "--store", db, str(mapping), "--note", "from the runbook"])
    assert (done.exit_code, done.output) == (0, f"declared 2 tool effects from {mapping}\n")
    listed = json.loads(runner.invoke(cli, ["effects", "list", "--store", db, "--format", "json"]).output)
    assert [(r["pattern"], r["effect"], r["note"]) for r in listed] == [
        ("send_*", "write", "from the runbook"), ("get_balance", "read", "from the runbook")]
    assert runner.invoke(cli, ["effects", "unknown", "--store", db]).output == "every call has a known effect\n"
    info = runner.invoke(cli, ["info", "--store", db]).output
    assert "executed writes: 1; 0 calls have an unknown effect\n" in info
    removed = runner.invoke(cli, ["effects", "unset", "--store", db, "send_*"])
    assert (removed.exit_code, removed.output) == (0, "removed 1 tool effect\n")
    assert "executed writes: 0; 1 call has an unknown effect: see `tracelab effects unknown`" in \
        runner.invoke(cli, ["info", "--store", db]).output


@pytest.mark.parametrize("args, message", [
    (["set", "send"], 'error: "send": expected NAME_OR_GLOB=read or NAME_OR_GLOB=write'),
    (["set", "send=maybe"], 'error: "send": the effect must be read or write'),
    (["unset", "nope"], 'error: not declared: "nope" (see `tracelab effects list`)'),
])
def test_effects_command_errors_are_one_line_exit_2(tmp_path, write_jsonl, args, message):
    db = str(tmp_path / "s.duckdb")
    open_store(db).close()
    result = CliRunner().invoke(cli, ["effects", *args, "--store", db])
    assert result.exit_code == 2
    assert result.output.strip() == message


@pytest.mark.parametrize("text, message", [
    ("- a\n- b\n", "expected a mapping of tool names or globs to read or write"),
    ("a: write\na: read\n", "key 'a' repeats the key of line 1"),
    ("a: [write]\n", '"a": the effect must be read or write'),
])
def test_effects_import_refuses_bad_files(tmp_path, text, message):
    db = str(tmp_path / "s.duckdb")
    open_store(db).close()
    path = tmp_path / "e.yaml"
    path.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(cli, ["effects", "import", "--store", db, str(path)])
    assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output


# --- export, Parquet stores and earlier stores ----------------------------------------------------

def test_export_carries_tool_effects_and_a_parquet_store_answers_alike(checker, store, tmp_path):
    checker.ingest(ep("r1", *call("send_money"), *call("peek", effect="read")), ep("r2", *call("send_money")))
    store.effects.set({"send_*": "write"}, note="ops")
    store.export(tmp_path / "pq")
    query = "SELECT episode_id, tool_name, effect, effect_source FROM {} ORDER BY ALL"
    with open_store(tmp_path / "pq") as parquet:
        assert parquet.effects.list().select("pattern", "effect", "note").rows() == [("send_*", "write", "ops")]
        for view in ("calls", "executed_writes"):
            assert parquet.sql(query.format(view)).rows() == store.sql(query.format(view)).rows()
        with pytest.raises(StoreError, match="read-only"):
            parquet.effects.set({"peek": "write"})


def test_an_earlier_store_is_upgraded_when_opened(tmp_path, write_jsonl):
    db = tmp_path / "old.duckdb"
    path = write_jsonl([ep("r1", *call("a", effect="write"), *call("b"), tools=[{"name": "b", "effect": "read"}])])
    with open_store(db) as store:
        store.ingest([path])
    con = duckdb.connect(str(db))  # make it what an earlier tracelab wrote
    for view in ("tool_availability", "executed_writes", "calls"):
        con.execute(f"DROP {'MACRO TABLE' if view == 'tool_availability' else 'VIEW'} {view}")
    con.execute("DROP MACRO TABLE registry_effects")
    con.execute("DROP TABLE tool_effects")
    con.execute("ALTER TABLE tool_calls DROP COLUMN effect_source")
    con.execute("ALTER TABLE tool_definitions DROP COLUMN annotations")
    con.close()
    with open_store(db, read_only=True) as store:
        assert _calls(store) == {"a": ("write", "step"), "b": ("read", "definition")}
        assert store.sql("SELECT tool_name FROM executed_writes").rows() == [("a",)]
        assert store.effects.list().height == 0


def test_the_readme_tour_declares_the_sample_effects(tmp_path):
    from tests.conftest import REPO

    db = str(tmp_path / "s.duckdb")
    runner = CliRunner()
    assert runner.invoke(cli, ["ingest", "--store", db, str(REPO / "sample_traces")]).exit_code in (0, 2)
    with open_store(db, read_only=True) as store:
        before = store.sql("SELECT count(*) FROM executed_writes").item()
        unknown_before = store.effects.unknown_calls()
    result = runner.invoke(cli, ["effects", "import", "--store", db, str(REPO / "sample_traces" / "effects.yaml")])
    assert result.exit_code == 0, result.output
    with open_store(db, read_only=True) as store:
        after = dict(store.sql("SELECT effect_source, count(*) FROM executed_writes GROUP BY 1").rows())
        assert sum(v for k, v in after.items() if k != "registry") == before
        assert after["registry"] > 0
        left = store.effects.unknown()["tool_name"].to_list()
        assert unknown_before > store.effects.unknown_calls() > 0
    # the shell tools are left unknown on purpose (sample_traces/effects.yaml)
    assert {"bash", "execute_bash"} <= set(left)


def test_declaring_effects_refuses_a_damaged_store_untouched(tmp_path, write_jsonl):
    db = tmp_path / "s.duckdb"
    with open_store(db) as store:
        store.ingest([write_jsonl([ep(f"r{i}", *call("send", {"pad": "x" * 2000})) for i in range(400)])])
    data = bytearray(db.read_bytes())
    for offset in range(300_000, len(data) - 4096, 40_000):
        data[offset:offset + 2048] = b"\xff" * 2048
    db.write_bytes(bytes(data))
    result = CliRunner().invoke(cli, ["effects", "set", "send=write", "--store", str(db)])
    assert result.exit_code == 3 and "damaged" in result.output and "Traceback" not in result.output
    assert db.read_bytes() == bytes(data)
