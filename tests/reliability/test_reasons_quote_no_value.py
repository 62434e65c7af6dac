"""A failure's reason never quotes the stored value: an `args_valid` reason names the path and the
rule, a failing `where` the case and the kind of error (issue 14, items 1 and 2).
"""
from __future__ import annotations

from tests.conftest import episode
from tests.reliability.support import KEY, ingested, one_line_error, run_cli, suite_file


def test_args_valid_reasons_name_the_path_and_rule_never_the_value(tmp_path):
    store = ingested(tmp_path, episode(
        "r1", {"kind": "tool_call", "name": "send", "call_id": "1", "args": {"body": f"Authorization: Bearer {KEY}"}},
        {"kind": "tool_result", "call_id": "1"}, case_id="c"))
    suite = suite_file(tmp_path, """
        - {type: args_valid, id: short-body, tool: send, schema: {type: object, properties: {body: {maxLength: 5}}}}
        - {type: args_valid, id: no-extra, tool: send, schema: {type: object, additionalProperties: false}}
    """)
    outputs = {}
    for fmt in ("text", "json", "junit"):
        code, out, err = run_cli("check", str(suite), "--store", str(store), "--format", fmt, "--all-results")
        assert (code, err) == (1, "")
        outputs[fmt] = out
    outputs["saved"] = run_cli("sql", "SELECT reason FROM check_results", "--store", str(store), "--format", "csv")[1]
    assert "call_index 0: args invalid at /body: fails maxLength 5 (the value is a string of 42 characters)" \
        in outputs["text"]
    assert "args invalid: fails additionalProperties (the value is a string of 42 characters)" in outputs["saved"]
    leaked = [name for name, text in outputs.items() for part in (KEY, "Bearer", "body'") if part in text]
    assert leaked == []


def test_a_where_failing_on_stored_data_never_quotes_it(tmp_path):
    store = ingested(tmp_path, episode("r1", {"kind": "user", "text": "hi"}, case_id="c",
                                       agent=f"PAYMENTS_KEY={KEY}"))
    suite = suite_file(tmp_path, "- {type: output_contains, value: ok}",
                       select='{where: "CAST(agent AS INTEGER) > 1"}')
    for command in ("check", "cover"):
        code, out, err = run_cli(command, str(suite), "--store", str(store))
        assert (code, out) == (2, "") and one_line_error(err), err
        assert err.startswith(f"error: {suite}:4: case 'c': key 'select.where' fails on the stored runs with a "
                              "DuckDB Conversion Error")
        assert KEY not in err and "PAYMENTS" not in err


