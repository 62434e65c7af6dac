"""args_valid: the one check SQL cannot do, JSON Schema validation (docs/duckdb-notes.md §6).

`sql/engine/assertions/args_valid.sql` hands over only the calls of each assertion's
tool in its selected runs; this module validates them with the cached
draft 2020-12 validators of `tracelab.suite.schemas` and returns verdict rows.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import jsonschema_rs
import orjson
import polars as pl

from tracelab.engine.compile import FROM_DEFINITIONS, SchemaCheck
from tracelab.errors import SuiteError
from tracelab.suite.schemas import SchemaRefused, schema_validator

_OUT_SCHEMA = pl.Schema({"unit_id": pl.Int64, "episode_id": pl.Utf8, "passed": pl.Boolean,
                         "exercised": pl.Utf8, "reason": pl.Utf8, "step_idx": pl.Int32})
_REASON_LIMIT = 300
_CALL_KEYS = ["unit_id", "args", "args_text", "parameters"]
"""A call's outcome depends on these alone: each distinct combination is validated once."""
_OUTCOME_SCHEMA = {"checked": pl.Boolean, "problem": pl.Utf8}


def validate_calls(calls: pl.DataFrame, checks: Mapping[int, SchemaCheck]) -> pl.DataFrame:
    """Verdict rows (unit_id, episode_id, passed, exercised, reason, step_idx), one per unit and run.

    Each distinct (unit, args, parameters) is validated once, however many calls repeat it;
    the outcomes are joined back to the calls, and each run's first failing call (by
    call_index) decides its verdict.

    Args:
        calls: the rows of args_valid.sql: a run without a call of the tool has one row with
            a NULL call_index.
        checks: the args_valid units of the plan.

    Raises:
        SuiteError: an explicit schema that is not a valid schema (the loader refuses these;
            this guards suites built in code).
    """
    validators = _explicit_validators(checks)
    present = calls.filter(pl.col("call_index").is_not_null())
    distinct = present.select(_CALL_KEYS).unique()
    outcomes = [_outcome(validators.get(unit_id), args, args_text, parameters)
                for unit_id, args, args_text, parameters in distinct.iter_rows()]
    judged = present.join(
        pl.concat([distinct, pl.DataFrame(outcomes, schema=_OUTCOME_SCHEMA, orient="row")],
                  how="horizontal"),
        on=_CALL_KEYS, how="left", nulls_equal=True)
    failing = pl.col("problem").is_not_null()
    # rows keep their order inside a group: the first failing row is the lowest call_index
    per_run = judged.sort("call_index").group_by("unit_id", "episode_id").agg(
        failed_at=pl.col("call_index").filter(failing).first(),
        step_idx=pl.col("call_step_idx").filter(failing).first(),  # the failure's location
        problem=pl.col("problem").filter(failing).first(),
        checked=pl.col("checked").any(),
    )
    tools = pl.DataFrame({"unit_id": list(checks),
                          "tool": [orjson.dumps(c.tool).decode() for c in checks.values()]},
                         schema={"unit_id": pl.Int64, "tool": pl.Utf8})
    runs = calls.select("unit_id", "episode_id").unique()
    return (runs.join(per_run, on=["unit_id", "episode_id"], how="left")
            .join(tools, on="unit_id", how="left")
            .select("unit_id", "episode_id", *_VERDICT, "step_idx").cast(_OUT_SCHEMA))


def _clipped(text: pl.Expr) -> pl.Expr:
    """`text` cut to _REASON_LIMIT characters, an ellipsis marking the cut."""
    return pl.when(text.str.len_chars() <= _REASON_LIMIT).then(text).otherwise(
        text.str.slice(0, _REASON_LIMIT - 1) + pl.lit("…"))


_FAILED = pl.col("failed_at").is_not_null()
_NO_CALL = pl.col("checked").is_null()
_VERDICT = (
    (~_FAILED).alias("passed"),
    pl.when(_FAILED | pl.col("checked")).then(pl.lit("yes"))
    .when(_NO_CALL).then(pl.lit("no")).otherwise(pl.lit("unknown")).alias("exercised"),
    pl.when(_FAILED).then(_clipped(pl.format("call_index {}: {}", "failed_at", "problem")))
    .when(_NO_CALL).then(pl.format("no call of {}", "tool"))
    .when(~pl.col("checked")).then(pl.format("no parameters were recorded for {}", "tool"))
    .alias("reason"),
)
"""passed, exercised, reason of a run from its first failure and whether a schema applied."""


def _explicit_validators(checks: Mapping[int, SchemaCheck]) -> dict[int, jsonschema_rs.Validator]:
    validators = {}
    for unit_id, check in checks.items():
        if check.schema == FROM_DEFINITIONS:
            continue
        try:
            validators[unit_id] = schema_validator(check.schema)
        except SchemaRefused as exc:
            raise SuiteError(f"case {check.case_id!r}: assertion {check.assertion_id!r}: "
                             f"schema: {exc}") from None
    return validators


def _outcome(validator: jsonschema_rs.Validator | None, args: str | None, args_text: str | None,
             parameters: str | None) -> tuple[bool, str | None]:
    """(checked, problem) of one call: whether a schema was applied, and why it failed.

    Without an explicit `validator` (from_definitions), a call whose run recorded no
    parameters for the tool is skipped, and one whose recorded parameters are not a valid
    schema fails.
    """
    if validator is None:
        if parameters is None:
            return False, None
        try:
            validator = schema_validator(_loads(parameters))
        except SchemaRefused as exc:
            return False, f"the recorded parameters are not a valid schema: {exc}"
    return True, args_problem(validator, args, args_text)


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
    where = " at /" + "/".join(str(part) for part in error.instance_path) if error.instance_path else ""
    return f"args invalid{where}: {_rule(error)} ({_shape(error.instance)})"


_SCHEMA_SIDE = ("limit", "types", "pattern", "property", "options", "expected_value")
"""Fields of a jsonschema_rs error kind that come from the schema. The others (`unexpected`)
and the error's message quote the args, which may hold the secret a check is about."""


def _rule(error: jsonschema_rs.ValidationError) -> str:
    """The rule a call broke, from the schema alone: ``fails maxLength 5``."""
    kind = error.kind
    details = kind.as_dict()
    # the schema's keyword names the rule best (`additionalProperties: false` fails as falseSchema)
    keyword = error.schema_path[-1] if error.schema_path and isinstance(error.schema_path[-1], str) else kind.name
    if kind.name == "additionalProperties":
        return f"fails additionalProperties ({len(details.get('unexpected') or [])} not allowed)"
    if "types" in details:
        details["types"] = " or ".join(details["types"])
    shown = [details[key] if key == "types" else orjson.dumps(details[key]).decode()
             for key in _SCHEMA_SIDE if key in details]
    rule = f"fails {keyword}" + (f" {', '.join(shown)}" if shown else "")
    return rule if len(rule) <= 120 else rule[:119] + "…"


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one}" if n == 1 else f"{n} {many or one + 's'}"


def _shape(value: Any) -> str:
    """What the failing value is, never what it holds: its JSON type and size."""
    if isinstance(value, str):
        return f"the value is a string of {_count(len(value), 'character')}"
    if isinstance(value, list):
        return f"the value is an array of {_count(len(value), 'item')}"
    if isinstance(value, dict):
        return f"the value is an object of {_count(len(value), 'property', 'properties')}"
    if isinstance(value, bool):
        return "the value is a boolean"
    if value is None:
        return "the value is null"
    return "the value is a number"


def _loads(text: str) -> Any:
    """Parse JSON text stored by DuckDB (orjson, or json for integers beyond 64 bits)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


__all__ = ["args_problem", "validate_calls"]
