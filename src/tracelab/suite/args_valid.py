"""args_valid: the one check SQL cannot do, JSON Schema validation (duckdb-notes §6).

`sql/assertions/args_valid.sql` hands over only the calls of each assertion's
tool in its selected runs; this module validates them with the cached
draft 2020-12 validators of `tracelab.suite.schemas` and returns verdict rows.
"""
from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from itertools import groupby
from typing import Any

import jsonschema_rs
import orjson
import polars as pl

from tracelab.errors import SuiteError
from tracelab.suite.compile import FROM_DEFINITIONS, SchemaCheck
from tracelab.suite.schemas import SchemaRefused, schema_validator

_OUT_SCHEMA = {"unit_id": pl.Int64, "episode_id": pl.Utf8, "passed": pl.Boolean,
              "exercised": pl.Utf8, "reason": pl.Utf8}
_REASON_LIMIT = 300


def validate_calls(calls: pl.DataFrame, checks: Mapping[int, SchemaCheck]) -> pl.DataFrame:
    """Verdict rows (unit_id, episode_id, passed, exercised, reason), one per unit and run.

    Args:
        calls: the rows of args_valid.sql, ordered by unit, run and call_index; a run
            without a call of the tool has one row with a NULL call_index.
        checks: the args_valid units of the plan.

    Raises:
        SuiteError: an explicit schema that is not a valid schema (the loader refuses these;
            this guards suites built in code).
    """
    rows = []
    memo = _Memo()
    ordered = calls.iter_rows(named=True)
    for (unit_id, episode_id), group in groupby(ordered, key=lambda r: (r["unit_id"],
                                                                        r["episode_id"])):
        check = checks[unit_id]
        present = [row for row in group if row["call_index"] is not None]
        rows.append((unit_id, episode_id, *_verdict(check, present, memo)))
    return pl.DataFrame(rows, schema=_OUT_SCHEMA, orient="row")


class _Memo(dict):
    """args_problem per (validator, args): runs repeat the same arguments many times."""

    def problem(self, validator: jsonschema_rs.Validator, call: dict[str, Any]) -> str | None:
        key = (validator, call["args"], call["args_text"])
        if key not in self:
            self[key] = args_problem(validator, call["args"], call["args_text"])
        return self[key]


def _verdict(check: SchemaCheck, calls: list[dict[str, Any]], memo: _Memo
             ) -> tuple[bool, str, str | None]:
    tool = orjson.dumps(check.tool).decode()
    if not calls:
        return True, "no", f"no call of {tool}"
    checked = 0
    for call, validator in _validators(check, calls):
        if isinstance(validator, str):
            return False, "yes", _clip(f"call_index {call['call_index']}: {validator}")
        checked += 1
        problem = memo.problem(validator, call)
        if problem is not None:
            return False, "yes", _clip(f"call_index {call['call_index']}: {problem}")
    if checked == 0:
        return True, "unknown", f"no parameters were recorded for {tool}"
    return True, "yes", None


def _validators(check: SchemaCheck, calls: list[dict[str, Any]]
                ) -> Iterator[tuple[dict[str, Any], jsonschema_rs.Validator | str]]:
    """Each call with its validator, or with why its recorded parameters cannot validate.

    from_definitions skips calls whose run recorded no parameters for the tool.
    """
    if check.schema != FROM_DEFINITIONS:
        try:
            validator = schema_validator(check.schema)
        except SchemaRefused as exc:
            raise SuiteError(f"case {check.case_id!r}: assertion {check.assertion_id!r}: "
                             f"schema: {exc}") from None
        for call in calls:
            yield call, validator
        return
    for call in calls:
        if call["parameters"] is None:
            continue
        try:
            yield call, schema_validator(_loads(call["parameters"]))
        except SchemaRefused as exc:
            yield call, f"the recorded parameters are not a valid schema: {exc}"


def args_problem(validator: jsonschema_rs.Validator, args: str | None,
                 args_text: str | None) -> str | None:
    """Why a call's args fail the schema, or None when they validate.

    `args` is the stored JSON text (NULL when unparseable); absent or null args
    (both NULL) validate as `{}`; recorded args that did not parse fail.
    """
    if args is None and args_text is not None:
        return "args are not valid JSON"
    instance = {} if args is None else _loads(args)
    error = next(iter(validator.iter_errors(instance)), None)
    if error is None:
        return None
    if not error.instance_path:
        return f"args invalid: {error.message}"
    where = "/" + "/".join(str(part) for part in error.instance_path)
    return f"args invalid at {where}: {error.message}"


def _loads(text: str) -> Any:
    """Parse JSON text stored by DuckDB (orjson, or json for integers beyond 64 bits)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


def _clip(text: str) -> str:
    return text if len(text) <= _REASON_LIMIT else text[: _REASON_LIMIT - 1] + "…"


__all__ = ["args_problem", "validate_calls"]
