"""`--engine spark` when things go wrong (issue 29, "Denial of service", "Tracebacks and wrong
exits"): an object store that never answers is one line within a bounded time, and SIGTERM
stops the wait; a master that cannot start and Spark Connect without grpcio are one line."""
from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from tracelab.errors import UsageError
from tracelab.spark import paths


class _Silent:
    """A file system whose listing never answers (no network, retried for ever)."""

    def get_file_info(self, *args: object) -> object:
        threading.Event().wait()
        raise AssertionError("unreachable")


def test_a_listing_that_never_answers_is_one_line_in_bounded_time(monkeypatch):
    monkeypatch.setattr(paths, "filesystem", lambda url: (_Silent(), "bucket/x.jsonl"))
    monkeypatch.setattr(paths, "ANSWER_TIMEOUT", 0.5)
    clock = time.monotonic()
    with pytest.raises(UsageError, match=r"gs://no-such-bucket/x.jsonl: the object store did not answer within"):
        paths.list_files("gs://no-such-bucket/x.jsonl")
    assert time.monotonic() - clock < 5


def test_a_gcs_file_system_is_built_with_a_bounded_retry():
    pafs = pytest.importorskip("pyarrow.fs")
    fs, path = paths.filesystem("gs://no-such-bucket/x.jsonl")
    assert isinstance(fs, pafs.GcsFileSystem) and path == "no-such-bucket/x.jsonl"


def test_sigterm_stops_a_listing_that_never_answers(tmp_path):
    script = textwrap.dedent(f"""
        import threading, sys
        from tracelab.spark import paths

        class Silent:
            def get_file_info(self, *args):
                threading.Event().wait()

        paths.filesystem = lambda url: (Silent(), "bucket/x.jsonl")
        from tracelab.cli import main
        print("listing", flush=True)
        main(["ingest", "--engine", "spark", "gs://no-such-bucket/x.jsonl", "--store", {str(tmp_path / 'store')!r}])
    """)
    process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    assert process.stdout is not None and process.stdout.readline() == "listing\n"
    time.sleep(1.5)
    clock = time.monotonic()
    process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=20)
    assert time.monotonic() - clock < 10
    assert process.returncode == 130, err
    assert err.startswith("error: interrupted (SIGTERM)") and err.count("\n") == 1 and "Traceback" not in err


def test_the_listing_call_leaves_the_main_thread_free_for_signals(monkeypatch):
    """A real client blocks in C++ without returning to Python: only a main thread that does not
    make the call can take Ctrl-C or SIGTERM at once (the fakes above block in Python)."""
    callers = []

    class Recording:
        def get_file_info(self, *args):
            callers.append(threading.current_thread() is threading.main_thread())
            raise OSError("no network")

    monkeypatch.setattr(paths, "filesystem", lambda url: (Recording(), "bucket/x.jsonl"))
    with pytest.raises(UsageError, match="cannot be listed"):
        paths.list_files("gs://no-such-bucket/x.jsonl")
    assert callers == [False]


def test_spark_connect_without_grpcio_is_one_line(monkeypatch):
    pytest.importorskip("pyspark")
    try:
        import grpc  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("grpcio is installed here")
    from pyspark.sql import SparkSession

    from tracelab.spark import engine

    monkeypatch.setenv("SPARK_REMOTE", "sc://127.0.0.1:1")
    monkeypatch.delenv(engine.MASTER_ENV, raising=False)
    # as in a fresh process, whatever session an earlier test of this run left active
    monkeypatch.setattr(SparkSession, "getActiveSession", staticmethod(lambda: None))
    with pytest.raises(UsageError, match=r"Spark Connect \(sc://127.0.0.1:1\) needs packages .*pyspark\[connect\]"):
        engine.session()


def test_a_master_that_cannot_start_is_one_line(monkeypatch):
    pyspark_sql = pytest.importorskip("pyspark.sql")
    from tracelab.spark import engine

    class Refusing:
        def master(self, url):
            return self

        def appName(self, name):  # noqa: N802  (pyspark's name)
            return self

        def config(self, *args):
            return self

        def getOrCreate(self):  # noqa: N802
            raise RuntimeError("Failed to connect to master 127.0.0.1:1\n\tat org.apache.spark.Foo(Foo.java:1)")

    monkeypatch.setattr(pyspark_sql.SparkSession, "builder", Refusing())
    monkeypatch.setattr(pyspark_sql.SparkSession, "getActiveSession", staticmethod(lambda: None))
    with pytest.raises(UsageError) as caught:
        engine.session("spark://127.0.0.1:1")
    message = str(caught.value)
    assert message.startswith("Spark could not start on spark://127.0.0.1:1 (Failed to connect to master")
    assert "\n" not in message and "Foo.java" not in message


def test_ctrl_c_during_a_spark_ingest_is_an_interrupt(monkeypatch, tmp_path):
    from tracelab.errors import Interrupted
    from tracelab.spark import engine

    class Py4JJavaError(Exception):
        """What py4j raises from within the KeyboardInterrupt that cut a JVM call short."""

    def wave(*args):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise Py4JJavaError("An error occurred while calling o42.collect") from None

    monkeypatch.setattr(engine, "session", lambda master: object())
    monkeypatch.setattr(engine, "_parallelism", lambda spark: 1)
    monkeypatch.setattr(engine, "_run_wave", wave)
    chunk = engine._Chunk(index=0, files=[("a.jsonl", None)])
    with pytest.raises(Interrupted, match="interrupted: nothing was committed"):
        engine._ingest(engine.open_layout(tmp_path / "store", create=True), [chunk], 1, "auto", False, None, None)
