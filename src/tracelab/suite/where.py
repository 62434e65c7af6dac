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
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import duckdb

from tracelab.errors import SuiteError
from tracelab.sqlfiles import load_sql

if TYPE_CHECKING:
    import polars as pl

REFUSED_FUNCTIONS = frozenset({
    "current_setting",  # reads the connection's settings (paths, limits): not a run's data
    "getenv",           # the environment (the DuckDB shell has it; refused should it appear)
    "sleep_ms",         # stalls a check for as long as the suite asks
    "write_log",        # writes to DuckDB's log, which can be a file
    "nextval", "currval", "setseed",  # change or read state outside the row
})
"""Scalar functions a `where` may not call: each observes or changes something other than the
run it is given. The selection also runs in a sandbox with external access disabled
(`where_flags`), so a function missed here still reads no file and no environment."""


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
            con.execute(load_sql("store/schema/tables"))
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
        if len(described) != 1:  # COLUMNS('...') matching several columns: several expressions
            return (f"expands to {len(described)} expressions (COLUMNS(...) matches {len(described)} "
                    "columns); write one boolean expression, e.g. joined with AND")
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
            if kind == "FUNCTION" and part.get("function_name", "").lower() in REFUSED_FUNCTIONS:
                return (f"{part['function_name']}() is not allowed in a where: it reads or changes "
                        "something other than the run (the environment, settings, time, logs)")
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


# --- evaluation at check time --------------------------------------------------------------

_COLUMNS = "__COLUMNS__"


def where_columns(exprs: list[str], known: list[str]) -> list[str]:
    """The columns of episodes (`known`, in table order) that the `where` expressions use;
    all of them when one uses a star (``COLUMNS(*)``)."""
    used: set[str] = set()
    with duckdb.connect(":memory:", config={"enable_external_access": False}) as con:
        for expr in exprs:
            sql = f"SELECT * FROM episodes WHERE {where_predicate(expr)}"
            row = con.execute(load_sql("suite/where_ast"), [sql]).fetchone()
            assert row is not None  # json_serialize_sql returns one row
            tree = json.loads(row[0])
            where = tree["statements"][0]["node"]["where_clause"]
            for part in _walk(where):
                if part.get("class") == "STAR":
                    return list(known)
                if part.get("class") == "COLUMN_REF":
                    used.add(part["column_names"][-1].lower())
    return [name for name in known if name.lower() in used]


def where_flags(con: duckdb.DuckDBPyConnection, wheres: list[tuple[str, str]],
                located: Callable[[str], str]) -> pl.DataFrame:
    """The value of every `where` for each run in chk_matched that a case with a `where` could
    select: (episode_id, flags BOOLEAN[]), flags in the order of `wheres`.

    The expressions run in a sandbox: an in-memory connection with external access disabled
    and its configuration locked, holding a copy of just the rows and columns of episodes
    they read (docs/suites.md §7). A `where` that fails on those values is a suite error whose
    message names the case but never quotes the value (it is stored trace text).

    Args:
        con: the store's connection, with chk_matched built (_select_matched.sql).
        wheres: (case id, expression) per case with a `where`, in where_idx order.
        located: the ``file:line: case 'id'`` prefix of a case's messages.

    Raises:
        SuiteError: a `where` fails on the stored runs.
    """
    import polars as pl

    from tracelab.frames import ArrowStream
    from tracelab.store import configure_connection, quote_identifier

    described = con.execute(load_sql("suite/where_columns")).fetchall()
    types = {name: kind for name, kind, *_ in described}
    columns = where_columns([expr for _, expr in wheres], list(types))
    if "episode_id" in columns:
        columns.remove("episode_id")
    columns = ["episode_id", *columns]
    template = load_sql("suite/where_rows")
    assert template.count(_COLUMNS) == 2  # one in the comment, one in the query
    query = template.replace(f"SELECT {_COLUMNS}", "SELECT " + ", ".join(map(quote_identifier, columns)))
    rows = pl.DataFrame(con.sql(query))
    with duckdb.connect(":memory:", config={"enable_external_access": False}) as sandbox:
        configure_connection(sandbox)
        sandbox.execute("SET lock_configuration = true")
        table = ", ".join(f"{quote_identifier(name)} {types[name]}" for name in columns)
        sandbox.execute(f"CREATE TABLE episodes ({table})")
        sandbox.register("where_rows", ArrowStream(rows))  # a frame registered as is goes through pyarrow
        sandbox.execute("INSERT INTO episodes SELECT * FROM where_rows")
        sandbox.unregister("where_rows")
        flags = ", ".join(f"coalesce({where_predicate(expr)}, false)" for _, expr in wheres)
        try:
            return pl.DataFrame(sandbox.sql(f"SELECT episode_id, [{flags}]::BOOLEAN[] AS flags FROM episodes"))
        except duckdb.Error:
            pass
        for case_id, expr in wheres:  # which case: looked for only once the selection failed
            try:
                sandbox.execute(f"SELECT count(*) FROM episodes WHERE {where_predicate(expr)}")
            except duckdb.Error as exc:
                raise SuiteError(f"{located(case_id)}: key 'select.where' fails on the stored runs "
                                 f"with a DuckDB {_error_kind(exc)} (the message is not shown: it "
                                 "may quote stored trace text); guard the expression, e.g. with "
                                 "TRY_CAST") from None
        raise SuiteError(f"{located(wheres[0][0])}: key 'select.where': the cases' `where`s fail "
                         "together on the stored runs")


def _error_kind(exc: duckdb.Error) -> str:
    """``Conversion Error`` from DuckDB's ``Conversion Error: Could not convert string '...'``."""
    head = str(exc).split(":", 1)[0].strip()
    return head if head.endswith("Error") and "\n" not in head else type(exc).__name__
