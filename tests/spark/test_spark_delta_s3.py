"""The Delta store of `--engine spark` on object storage, without a network: moto's S3 server on
127.0.0.1 (docs/cli.md §1, Scale-out). Ingest, check and the read-back run against an ``s3://``
store as against a local path, and hold the DuckDB engine's tables and verdicts row for row;
Polars' `scan_delta` reads the `episodes` table as it is."""
from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from tests.spark.test_spark_engine import (
    SUITE,
    TINY_CHUNKS,
    _assert_same_tables,
    _cli,
    _corpus,
    _duckdb_export,
    _same_check,
)
from tracelab.spark import engine
from tracelab.store.delta import table_datasets

pytest.importorskip("moto", reason="moto is not installed (pip install 'tracelab[test]')")
pl = pytest.importorskip("polars")

def _polars_rows(store: str, env: dict[str, str]) -> list[str]:
    """`pl.scan_delta` on the store's episodes table: every row, as JSON, sorted."""
    options = ({"aws_endpoint_url": env["AWS_ENDPOINT_URL"], "aws_allow_http": "true",
                "aws_access_key_id": "testing", "aws_secret_access_key": "testing", "aws_region": "us-east-1"}
               if store.startswith("s3://") else None)
    frame = pl.scan_delta(f"{store}/episodes", storage_options=options).drop("ep_bucket").collect()
    return sorted(json.dumps(row, sort_keys=True, default=str) for row in frame.to_dicts())


def _duckdb_episodes(reference: Path) -> list[str]:
    con = duckdb.connect()
    frame = con.sql(f"SELECT * FROM read_parquet('{reference}/episodes/**/*.parquet', hive_partitioning = false)"
                    ).pl()
    return sorted(json.dumps(row, sort_keys=True, default=str) for row in frame.to_dicts())


@pytest.mark.parametrize("where", ["local", "s3"])
def test_delta_store_holds_duckdbs_tables_and_verdicts_on_a_path_and_on_s3(
        where: str, spark: object, s3_env: dict[str, str], tmp_path: Path) -> None:
    corpus = _corpus(tmp_path)
    store = f"s3://{s3_env['bucket']}/stores/one" if where == "s3" else str(tmp_path / "spark-store")
    report = engine.ingest(store, [corpus], chunk_bytes=TINY_CHUNKS)
    assert report.added > 100
    reference = _duckdb_export(tmp_path, [([corpus], False)])
    _assert_same_tables(store, reference)
    # a rerun adds nothing, and commits no new version of any data table
    before = table_datasets(store)["episodes"].count_rows()
    again = engine.ingest(store, [corpus], chunk_bytes=TINY_CHUNKS)
    assert again.added == 0 and table_datasets(store)["episodes"].count_rows() == before
    # Polars reads the Delta table as it is, the DuckDB engine's rows exactly (ingest time aside: it
    # is the time of each engine's own run)
    strip = [json.dumps({k: v for k, v in json.loads(r).items() if k != "ingested_at"}, sort_keys=True)
             for r in _polars_rows(store, s3_env)]
    want = [json.dumps({k: v for k, v in json.loads(r).items() if k != "ingested_at"}, sort_keys=True)
            for r in _duckdb_episodes(reference)]
    assert sorted(strip) == sorted(want)
    # check on Spark: the DuckDB engine's verdicts and exit code; saved, and read back by `sql`
    code, document = _same_check(store, tmp_path / "reference.duckdb", SUITE)  # type: ignore[arg-type]
    assert code == 1
    code, out = _cli("sql", "--store", store, "--format", "csv",
                     f"SELECT count(*) AS n FROM check_results WHERE run_id = '{document['run_id']}'")
    assert code == 0, out
    assert int(out.splitlines()[1]) == document["summary"]["results"]
