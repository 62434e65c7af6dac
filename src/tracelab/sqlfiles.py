"""SQL lives in `sql/`, one file per purpose, loaded by name.

Installed wheels carry it as `tracelab/sql`; a source checkout has it at the top level.
"""
from __future__ import annotations

import os
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import duckdb

_HERE = Path(__file__).resolve().parent


@cache
def sql_dir() -> Path:
    """The folder holding the SQL files (bundled copy first, then the checkout's)."""
    for candidate in (_HERE / "sql", _HERE.parent.parent / "sql"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("tracelab's sql/ folder is missing from this installation")


def path_literal(path: str | os.PathLike[str]) -> str:
    """`path` as a SQL string literal, quotes included.

    `COPY ... TO` and `read_parquet` take no bound parameter for a path, so a path is the only
    text tracelab writes into SQL; it is always tracelab's own (the store's folder, the folder
    `export` writes), never trace text.
    """
    return "'" + os.fspath(path).replace("'", "''") + "'"


@cache
def load_sql(name: str) -> str:
    """The text of `sql/<name>.sql`, e.g. ``load_sql("store/views/transcript")``."""
    return (sql_dir() / f"{name}.sql").read_text(encoding="utf-8")


def run_script(con: duckdb.DuckDBPyConnection, name: str, params: dict[str, Any] | None = None) -> None:
    """Run every statement of `sql/<name>.sql`, binding the named parameters each one uses."""
    for statement in load_sql(name).split(";\n"):
        if not statement.strip() or all(
            ln.strip().startswith("--") or not ln.strip() for ln in statement.splitlines()
        ):
            continue
        used = {k: v for k, v in (params or {}).items() if f"${k}" in statement}
        con.execute(statement, used or None)
