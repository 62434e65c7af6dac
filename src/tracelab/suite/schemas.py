"""JSON Schema as suites use it: draft 2020-12, `format` an annotation, nothing fetched.

`schema_validator` is the one place a schema becomes a validator, for suite
schemas at load and for recorded tool `parameters` at check time alike.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

import jsonschema_rs
import orjson


class SchemaRefused(ValueError):
    """A schema that is not a valid draft 2020-12 schema, or that points at a remote document."""


def _refuse_retrieval(uri: str) -> Any:
    raise SchemaRefused(f"$ref {uri!r} is outside the schema; remote references are never fetched")


def schema_validator(schema: Any) -> jsonschema_rs.Validator:
    """A compiled draft 2020-12 validator for `schema` (a dict or a bool), cached by content.

    Schemas are validated as draft 2020-12 whatever their `$schema` says;
    `format` is an annotation only; any `$ref` that is not inside the schema
    itself is refused, never fetched.

    Raises:
        SchemaRefused: with a one-line reason.
    """
    if not isinstance(schema, (dict, bool)):
        raise SchemaRefused("a JSON Schema must be an object or a boolean")
    try:
        text = orjson.dumps(schema, option=orjson.OPT_SORT_KEYS)
    except TypeError as exc:
        raise SchemaRefused(f"not JSON: {exc}") from None
    return _compiled(text)


@lru_cache(maxsize=1024)
def _compiled(text: bytes) -> jsonschema_rs.Validator:
    try:
        return jsonschema_rs.Draft202012Validator(
            orjson.loads(text), validate_formats=False, retriever=_refuse_retrieval
        )
    except (jsonschema_rs.ValidationError, ValueError, TypeError) as exc:
        raise SchemaRefused(_first_line(str(exc))) from None


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "invalid schema")
