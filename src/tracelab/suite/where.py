"""Checks that need DuckDB itself: `select.where` expressions and RE2 patterns.

A `where` is one boolean expression over the columns of `episodes` (docs/suites.md
§1, §7). It is checked twice at load, so that neither a hostile nor a mistyped
expression reaches a check:

1. statically, on DuckDB's own parse tree of ``SELECT * FROM episodes WHERE
   <predicate>``: exactly one plain SELECT of the base table `episodes` with a
   WHERE and nothing else (no UNION, ORDER BY, LIMIT, GROUP BY, CTE), and in
   the expression no subquery (all are refused, even read-only ones, so that a
   `where` can never reach another table), no parameter, no table function or
   file reader, and no column of a table other than `episodes`;
2. by binding it on an in-memory connection with external access disabled,
   against an empty `episodes` table of the real schema: a misspelt column or
   a non-boolean expression is a suite error, not a failure mid-check.

Patterns are compiled by DuckDB's `regexp_matches`, so what loads is exactly
what RE2 in DuckDB accepts.
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import duckdb

from tracelab.sqlfiles import load_sql


def where_predicate(expr: str) -> str:
    """The SQL a `where` expression becomes wherever it is used.

    Parenthesised, on lines of its own, so that a trailing `--` comment cannot
    swallow what follows. Callers embed exactly this, never `expr` bare.
    """
    return f"(\n{expr}\n)"


class SqlChecker:
    """One lazily opened in-memory DuckDB connection that checks a suite's SQL and patterns."""

    def __init__(self) -> None:
        self._con: duckdb.DuckDBPyConnection | None = None
        self._table_functions: frozenset[str] | None = None

    @property
    def con(self) -> duckdb.DuckDBPyConnection:
        """The connection: external access off, an empty `episodes` table of the real schema."""
        if self._con is None:
            con = duckdb.connect(":memory:", config={"enable_external_access": False})
            con.execute(load_sql("schema/tables"))
            self._con = con
        return self._con

    def close(self) -> None:
        """Close the connection, if one was opened."""
        if self._con is not None:
            self._con.close()
            self._con = None

    def __enter__(self) -> SqlChecker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def regex_problem(self, pattern: str) -> str | None:
        """Why RE2 (as DuckDB uses it) rejects `pattern`, or None when it compiles."""
        try:
            self.con.execute(load_sql("suite/re2_compiles"), [pattern]).fetchone()
        except duckdb.Error as exc:
            return f"not a valid RE2 pattern: {_one_line(exc)}"
        return None

    def where_problem(self, expr: str) -> str | None:
        """Why `expr` is not an acceptable `where`, or None when it is."""
        if not expr.strip():
            return "an empty expression; remove `where` or write a condition"
        sql = f"SELECT * FROM episodes WHERE {where_predicate(expr)}"
        tree = json.loads(self.con.execute(load_sql("suite/where_ast"), [sql]).fetchall()[0][0])
        problem = self._tree_problem(tree)
        if problem:
            return problem
        try:
            described = self.con.execute(
                f"DESCRIBE SELECT {where_predicate(expr)} AS matches FROM episodes"
            ).fetchall()
        except duckdb.Error as exc:
            return f"does not bind against the episodes table: {_one_line(exc)}"
        column_type = described[0][1]
        if column_type != "BOOLEAN":
            return f"must be a boolean expression, but it is of type {column_type}"
        return None

    def _tree_problem(self, tree: dict[str, Any]) -> str | None:
        if tree.get("error"):
            message = tree.get("error_message", "")
            if "Only SELECT" in message or ";" in message:
                return "must be one boolean expression; a second statement is not allowed"
            return f"not a valid SQL expression: {' '.join(message.split())}"
        statements = tree["statements"]
        if len(statements) != 1:
            return "must be one boolean expression; a second statement is not allowed"
        if statements[0].get("named_param_map"):
            return "parameters ($1, ?) are not allowed"
        node = statements[0]["node"]
        if not _is_plain_filter(node):
            return "must stay one boolean expression inside WHERE (no UNION, ORDER BY, LIMIT, ...)"
        return self._expression_problem(node["where_clause"])

    def _expression_problem(self, expr: Any) -> str | None:
        for part in _walk(expr):
            kind = part.get("class")
            if kind == "SUBQUERY" or "subquery" in part or "from_table" in part:
                return "subqueries are not allowed; use columns of episodes only"
            if kind == "PARAMETER":
                return "parameters ($1, ?) are not allowed"
            if kind == "FUNCTION" and part.get("function_name", "").lower() in self.table_functions:
                return (f"{part['function_name']}() is a table function; file readers and "
                        "table functions are not allowed")
            if kind == "COLUMN_REF":
                names = part.get("column_names", [])
                if len(names) > 2 or (len(names) == 2 and names[0] != "episodes"):
                    return (f"{'.'.join(names)} is not a column of episodes; "
                            "a where may use only columns of episodes")
        return None

    @property
    def table_functions(self) -> frozenset[str]:
        """Lower-cased names usable only in FROM."""
        if self._table_functions is None:
            rows = self.con.execute(load_sql("suite/table_functions")).fetchall()
            self._table_functions = frozenset(name.lower() for (name,) in rows)
        return self._table_functions


def _is_plain_filter(node: dict[str, Any]) -> bool:
    """True for exactly `SELECT * FROM episodes WHERE <expr>` and nothing more."""
    source = node.get("from_table") or {}
    select = node.get("select_list") or []
    return (
        node.get("type") == "SELECT_NODE"
        and not node.get("modifiers")
        and not (node.get("cte_map") or {}).get("map")
        and len(select) == 1 and select[0].get("class") == "STAR"
        and source.get("type") == "BASE_TABLE"
        and source.get("table_name") == "episodes"
        and not source.get("schema_name") and not source.get("catalog_name")
        and not source.get("alias") and source.get("sample") is None
        and source.get("at_clause") is None
        and node.get("where_clause") is not None
        and not node.get("group_expressions") and not node.get("group_sets")
        and node.get("having") is None and node.get("sample") is None
        and node.get("qualify") is None
    )


def _walk(value: Any) -> Iterator[dict[str, Any]]:
    """Every mapping inside a parse tree, depth first."""
    if isinstance(value, dict):
        yield value
        for child in value.values():
            yield from _walk(child)
    elif isinstance(value, list):
        for child in value:
            yield from _walk(child)


def _one_line(exc: BaseException) -> str:
    """DuckDB's message without its caret diagram, on one line."""
    lines = [line.strip() for line in str(exc).splitlines()]
    kept = [line for line in lines if line and not line.startswith(("LINE ", "^"))]
    return " ".join(" ".join(kept).split())
