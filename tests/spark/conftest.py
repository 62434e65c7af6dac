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
