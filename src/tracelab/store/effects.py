"""The store's tool effects (docs/trace-format.md §6): what people know, once, per tool.

Formats rarely record whether a tool reads or writes. A declaration here is kept in the
store's `tool_effects` table and counts at once in the view `calls`, in `executed_writes`
and in every check, without re-ingesting: a call's own recorded effect comes first, the
registry fills in what the run did not record, and a suite's `tools:` overrides both at
check time.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tracelab.errors import StoreError, UsageError
from tracelab.globs import glob_to_re2, is_glob
from tracelab.sqlfiles import load_sql, run_script

if TYPE_CHECKING:
    import polars as pl

    from tracelab.store import Store

EFFECTS = ("read", "write")


class Effects:
    """The tool-effect registry of one store (`Store.effects`)."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def list(self) -> pl.DataFrame:
        """Every declared pattern with its effect, note and `added_at`, in the order globs are tried."""
        return self._store.sql(load_sql("store/effects/list"))

    def unknown(self) -> pl.DataFrame:
        """The tools called with an unknown effect, most called first: `tool_name`, `calls`, `runs`."""
        return self._store.sql(load_sql("store/effects/unknown"))

    def unknown_calls(self) -> int:
        """How many calls have an unknown effect."""
        return int(self._store.con.execute(load_sql("store/effects/unknown_count")).fetchall()[0][0])

    def set(self, effects: Mapping[str, str], note: str | None = None) -> None:
        """Declare `pattern -> read|write` for exact tool names or globs (`*`, `?`, `[...]`).

        A pattern already declared keeps its place in the glob order and takes the new effect.

        Raises:
            UsageError: a pattern that is not a non-empty string or an effect other than read/write.
        """
        from tracelab.bulk_insert import arrow_table

        rows = [_checked(pattern, effect) for pattern, effect in effects.items()]
        if not rows:
            return
        con = self._writable()
        table = arrow_table({
            "pattern": [r[0] for r in rows], "effect": [r[1] for r in rows],
            "regex": [glob_to_re2(r[0]) if is_glob(r[0]) else None for r in rows],
            "pos": list(range(1, len(rows) + 1)),
        })
        con.register("effects_new", table)
        try:
            with _changing(con) as now:
                con.execute(load_sql("store/effects/set"), {"note": note, "now": now})
        finally:
            con.unregister("effects_new")

    def unset(self, patterns: Iterable[str]) -> None:
        """Remove declared patterns; all or nothing.

        Raises:
            UsageError: a pattern that is not declared (nothing is removed).
        """
        wanted = list(dict.fromkeys(patterns))
        con = self._writable()
        known = {row[0] for row in con.execute(
            "SELECT pattern FROM tool_effects WHERE pattern IN (SELECT unnest(?))", [wanted]).fetchall()}
        missing = [p for p in wanted if p not in known]
        if missing:
            raise UsageError(f"not declared: {', '.join(map(_quoted, missing))} (see `tracelab effects list`)")
        with _changing(con):
            con.execute("DELETE FROM tool_effects WHERE pattern IN (SELECT unnest(?))", [wanted])

    def load(self, path: str | Path, note: str | None = None) -> int:
        """Declare the effects of a YAML or JSON file shaped like a suite's `tools:`; how many.

        Raises:
            UsageError: the file cannot be read or is not a mapping of names to read/write.
        """
        mapping = read_mapping(Path(path))
        self.set(mapping, note=note)
        return len(mapping)

    def _writable(self) -> Any:
        if self._store.read_only:
            kind = "a Parquet store" if self._store.parquet else "a store opened read-only"
            raise StoreError(f"{self._store.path}: {kind} is read-only; declare effects in a DuckDB file store")
        self._store._verify()  # as ingest does: a damaged store is refused before anything is written
        return self._store.con


def changed_at(con: Any) -> datetime | None:
    """When the store's tool effects last changed (None: never); `check --since` compares it."""
    return con.execute(load_sql("store/effects/changed_at")).fetchall()[0][0]


@contextmanager
def _changing(con: Any) -> Iterator[datetime]:
    """One transaction: the change made in the block, and the instant it was made."""
    now = datetime.now(timezone.utc)
    con.begin()
    try:
        yield now
        run_script(con, "store/effects/changed", {"now": now})
        con.commit()
    except BaseException:
        con.rollback()
        raise


def parse_assignments(items: Iterable[str]) -> dict[str, str]:
    """`NAME_OR_GLOB=read|write` words as a mapping (the last of a repeated pattern wins).

    Raises:
        UsageError: a word without `=`.
    """
    out: dict[str, str] = {}
    for item in items:
        pattern, sep, effect = item.rpartition("=")
        if not sep:
            raise UsageError(f"{_quoted(item)}: expected NAME_OR_GLOB=read or NAME_OR_GLOB=write")
        out[pattern] = effect
    return out


def read_mapping(path: Path) -> dict[str, str]:
    """A YAML/JSON file holding `{tool name or glob: read|write}`, checked key by key.

    It is read as a suite file is (repeated keys refused, errors with file and line).
    """
    from tracelab.documents import read_document

    data = read_document(path, what="effects file").data
    if not isinstance(data, dict):
        raise UsageError(f"{path}: expected a mapping of tool names or globs to read or write")
    for pattern, effect in data.items():
        _checked(pattern, effect, where=f"{path}: ")
    return dict(data)


def _checked(pattern: Any, effect: Any, where: str = "") -> tuple[str, str]:
    if not isinstance(pattern, str) or not pattern:
        raise UsageError(f"{where}a tool name or glob must be a non-empty string")
    if effect not in EFFECTS:
        raise UsageError(f"{where}{_quoted(pattern)}: the effect must be read or write")
    return pattern, effect


def _quoted(text: str) -> str:
    """A pattern as the user typed it, with control characters escaped (it is our input, not stored text)."""
    import json

    return json.dumps(text, ensure_ascii=False)


__all__ = ["EFFECTS", "Effects", "changed_at", "parse_assignments", "read_mapping"]
