"""A 100k-run corpus on a Delta store, on a local path and on moto's S3 server (slow; `make soak`):
every table and the saved verdicts equal the DuckDB engine's, row for row (order-free digests of
every column, the ingest time aside), and `pl.scan_delta` reads the episodes table whole."""
from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from tests.spark.test_spark_engine import _cli
from tracelab.generate import generate
from tracelab.spark import engine
from tracelab.store import PARTITIONED, TABLES, open_store, quote_identifier
from tracelab.store.delta import table_datasets

pytestmark = pytest.mark.slow
pl = pytest.importorskip("polars")

RUNS = 100_000
SUITE = Path(__file__).resolve().parents[2] / "benchmarks" / "suite.yaml"


def _digest(con: duckdb.DuckDBPyConnection, relation: str) -> tuple[int, int]:
    """(rows, an order-free hash of every row), the ingest time aside."""
    names = [d[0] for d in con.execute(f"SELECT * FROM {relation} LIMIT 0").description]
    row = ", ".join(f"hash({quote_identifier(c)})" for c in names if c not in ("ingested_at", "ep_bucket", "run_id"))
    [(rows, digest)] = con.execute(f"SELECT count(*), coalesce(sum(hash([{row}])::HUGEINT), 0) FROM {relation}"
                                   ).fetchall()
    return rows, digest


@pytest.mark.parametrize("where", ["local", "s3"])
def test_a_100k_corpus_holds_duckdbs_tables_and_verdicts(where: str, spark: object, s3_env: dict[str, str],
                                                         tmp_path: Path) -> None:
    corpus = tmp_path / "in"
    for part in range(4):
        generate(corpus / f"part-{part}.jsonl", RUNS // 4, seed=7 + part)
    store = f"s3://{s3_env['bucket']}/stores/big" if where == "s3" else str(tmp_path / "spark-store")
    assert engine.ingest(store, [corpus]).added == RUNS
    duck = tmp_path / "duck.duckdb"
    with open_store(duck) as opened:
        opened.ingest([corpus])
    spark_con, duck_con = duckdb.connect(), duckdb.connect(str(duck), read_only=True)
    datasets = table_datasets(store)
    for table in TABLES:
        spark_con.register(f"t_{table}", datasets[table])
        assert _digest(spark_con, f"t_{table}") == _digest(duck_con, table), table
    assert pl.scan_delta(f"{store}/episodes", storage_options=_polars_options(store, s3_env)).select(
        pl.len()).collect().item() == RUNS
    duck_con.close()  # the check below writes into the store
    code_s, out_s = _cli("check", str(SUITE), "--format", "json", "--engine", "spark", "--store", store)
    code_d, out_d = _cli("check", str(SUITE), "--format", "json", "--store", str(duck))
    duck_con = duckdb.connect(str(duck), read_only=True)
    assert code_s == code_d
    import json

    spark_run, duck_run = json.loads(out_s)["run_id"], json.loads(out_d)["run_id"]
    spark_con.register("t_check_results", table_datasets(store)["check_results"])
    got = _digest(spark_con, f"(SELECT * FROM t_check_results WHERE run_id = '{spark_run}')")
    want = _digest(duck_con, f"(SELECT * FROM check_results WHERE run_id = '{duck_run}')")
    assert got == want and got[0] > 7 * RUNS
    assert PARTITIONED  # the partitioned tables were compared above as every other


def _polars_options(store: str, env: dict[str, str]) -> dict[str, str] | None:
    if not store.startswith("s3://"):
        return None
    return {"aws_endpoint_url": env["AWS_ENDPOINT_URL"], "aws_allow_http": "true", "aws_access_key_id": "testing",
            "aws_secret_access_key": "testing", "aws_region": "us-east-1"}
