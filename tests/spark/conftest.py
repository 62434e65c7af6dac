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
    yield session
    session.stop()
