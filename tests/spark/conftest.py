"""One SparkSession (local[2]) for every Spark test of a run: a JVM start costs seconds."""
from __future__ import annotations

import os
import shutil
from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    """The test run's SparkSession; tests that need Spark skip (with the reason) without pyspark or Java."""
    pytest.importorskip("pyspark", reason="pyspark is not installed (pip install 'tracelab[spark]')")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Spark needs Java 17 (no java on PATH and no JAVA_HOME)")
    from tracelab.spark import engine

    session = engine.session("local[2]")
    # one check task per core: every check still spreads its partitions over two tasks, in one
    # wave instead of two (a task's fixed cost, about a second here, dominates test-sized stores)
    tasks_per_core, engine.TASKS_PER_CORE = engine.TASKS_PER_CORE, 1
    yield session
    engine.TASKS_PER_CORE = tasks_per_core
    session.stop()


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[dict[str, str]]:
    """moto's S3 server on a free local port, and the environment that points delta-rs and
    pyarrow at it (the credentials are moto's dummies)."""
    pytest.importorskip("moto", reason="moto is not installed (pip install 'tracelab[test]')")
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": "us-east-1",
           "AWS_ENDPOINT_URL": f"http://{host}:{port}", "AWS_ALLOW_HTTP": "true"}
    server.stop()


@pytest.fixture
def s3_env(spark: object, s3_endpoint: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The endpoint's environment for the driver and for the Spark tasks (`spark.executorEnv`, as a
    cluster passes credentials to its executors), and a fresh bucket."""
    import boto3

    for key, value in s3_endpoint.items():
        monkeypatch.setenv(key, value)
    environment = spark.sparkContext.environment  # type: ignore[attr-defined]
    for key, value in s3_endpoint.items():
        monkeypatch.setitem(environment, key, value)
    bucket = f"b{os.urandom(4).hex()}"
    boto3.client("s3", endpoint_url=s3_endpoint["AWS_ENDPOINT_URL"], region_name="us-east-1").create_bucket(
        Bucket=bucket)
    return {"bucket": bucket, **s3_endpoint}
