"""The `check` benchmark's hand-written SQL baseline: benchmarks/handwritten.sql over a store.

The SQL an expert would write by hand for exactly benchmarks/suite.yaml: the same
(case_id, assertion_id, episode_id, passed, exercised) rows as `tracelab check`, computed
with the suite's literals built in. Its statements run in order on the store (opened
read-only, with the store's own settings); the last one's rows are written to Parquet.

    python benchmarks/handwritten.py STORE.duckdb --out verdicts.parquet
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from tracelab.store import open_store

SQL = Path(__file__).resolve().parent / "handwritten.sql"


def statements() -> list[str]:
    """The statements of handwritten.sql, in order (each ends at a `;` that ends a line)."""
    return [s for s in SQL.read_text(encoding="utf-8").split(";\n") if _has_code(s)]


def _has_code(statement: str) -> bool:
    return any(line.strip() and not line.strip().startswith("--") for line in statement.splitlines())


def run(store_path: str | Path, out_parquet: str | Path) -> int:
    """Compute the suite's verdicts over the store with handwritten.sql; write them to
    `out_parquet` and return how many rows there are."""
    *setup, verdicts = statements()
    with open_store(store_path, read_only=True) as store:
        for statement in setup:
            store.con.execute(statement).fetchall()
        relation = store.con.sql(verdicts)
        relation.write_parquet(str(out_parquet))
        [(rows,)] = store.con.sql("SELECT count(*) FROM hw_verdicts").fetchall()
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store", type=Path, help="a tracelab store (DuckDB file)")
    parser.add_argument("--out", type=Path, required=True, help="verdicts as Parquet")
    args = parser.parse_args(argv)
    clock = time.perf_counter()
    rows = run(args.store, args.out)
    print(f"{rows:,} verdicts in {time.perf_counter() - clock:.1f} s -> {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
