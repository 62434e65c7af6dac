"""The full verdict rows of a check of benchmarks/suite.yaml, saved or compared exactly.

    .venv/bin/python benchmarks/verdict_diff.py --episodes 100000 --write before.parquet
    .venv/bin/python benchmarks/verdict_diff.py --episodes 100000 --against before.parquet

Checks the store of `make bench`'s corpus of that size (benchmarks/work/check-corpus-N-7.duckdb,
opened read-only, nothing saved) and sorts `CheckRun.verdicts` by (case, assertion, run). With
--write the rows go to a Parquet file; with --against they must equal that file's rows exactly
(every column, every value, the same dtypes): an engine change that claims identical verdicts is
checked against the rows the code before it gave. Exits 1 and names the first difference if not.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import polars as pl
from polars.testing import assert_frame_equal

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ROOT, WORK  # noqa: E402

KEY = ["case_id", "assertion_id", "episode_id"]


def verdicts(store_path: Path) -> pl.DataFrame:
    """The sorted verdict rows of a check of suite.yaml over the store (opened read-only)."""
    from tracelab.results.check import check
    from tracelab.store import open_store

    store = open_store(store_path, read_only=True)
    try:
        rows = check(store, ROOT / "suite.yaml", save=False).verdicts
    finally:
        store.close()
    return rows.sort(KEY)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=100_000)
    parser.add_argument("--store", type=Path, help="this store instead of the corpus's")
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--write", type=Path, help="save the sorted rows to this Parquet file")
    target.add_argument("--against", type=Path, help="compare with the rows of this Parquet file")
    args = parser.parse_args()

    store_path = args.store or WORK / f"check-corpus-{args.episodes}-7.duckdb"
    rows = verdicts(store_path)
    if args.write:
        rows.write_parquet(args.write)
        print(f"{rows.height:,} verdict rows written to {args.write}")
        return
    expected = pl.read_parquet(args.against)
    duplicated = rows.select(KEY).is_duplicated().sum()
    if duplicated:
        sys.exit(f"{duplicated:,} rows share a (case, assertion, run) key: the sort is not total")
    try:
        assert_frame_equal(rows, expected, check_exact=True)
    except AssertionError as error:
        sys.exit(f"verdict rows differ from {args.against}: {error}")
    print(f"{rows.height:,} verdict rows identical to {args.against}")


if __name__ == "__main__":
    main()
