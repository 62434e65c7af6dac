"""Paths and URLs of `--engine spark` (docs/cli.md §1, Scale-out: "any URL the cluster reads").

- A plain path or a ``file://`` URL is a local (or shared, mounted) file: read as the DuckDB
  engine reads it, and recorded under the same path.
- Input files may also be URLs of object stores and HDFS (``s3a://``, ``s3://``, ``gs://``,
  ``hdfs://``, ``abfs://``...). They are listed on the driver and read in the tasks through
  `pyarrow.fs` (Hadoop's ``s3a`` is S3), each object copied to the task's temporary folder and
  recorded under its URL. The file system must be reachable with the credentials of the
  environment (AWS_*, GOOGLE_APPLICATION_CREDENTIALS, a libhdfs for HDFS); when it is not, the
  command stops with one line naming the URL.
- The store is a path, a ``file://`` URL or an object-store URL: its Delta tables' files are
  written through `store_filesystem` and committed by delta-rs (`tracelab.spark.layout`).
"""
from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import unquote, urlsplit

from tracelab.errors import UsageError, first_line

T = TypeVar("T")

SCHEMES = {"s3a": "s3", "s3n": "s3", "s3": "s3", "gs": "gs", "gcs": "gs", "hdfs": "hdfs", "viewfs": "hdfs",
           "abfs": "abfs", "abfss": "abfs"}
"""URL schemes read through `pyarrow.fs`, and the pyarrow file system of each."""


def local_path(url: str | os.PathLike[str], *, what: str = "path") -> Path | None:
    """A plain path or a ``file://`` URL as a local path; None for a URL of `SCHEMES`.

    Raises:
        UsageError: a URL of an unknown scheme, or a ``file://`` URL naming another host.
    """
    text = os.fspath(url)
    if "://" not in text:
        return Path(text)
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    if scheme == "file":
        if parts.netloc not in ("", "localhost"):
            raise UsageError(f"{text}: a file:// URL names a local path (file:///path), not host {parts.netloc!r}")
        return Path(unquote(parts.path))
    if scheme in SCHEMES:
        return None
    raise UsageError(f"{text}: --engine spark reads {what}s that are local paths, file:// URLs or "
                     f"{', '.join(sorted(s + '://' for s in SCHEMES))} URLs")


def is_remote(url: str) -> bool:
    """Whether `url` is read through `pyarrow.fs` (a URL of `SCHEMES`)."""
    return "://" in url and urlsplit(url).scheme.lower() in SCHEMES


def filesystem(url: str) -> tuple[Any, str]:
    """The `pyarrow.fs` file system of a URL of `SCHEMES`, and the path in it.

    Raises:
        UsageError: the file system cannot be set up here (no libhdfs, bad credentials...).
    """
    pafs = _pyarrow_fs()

    parts = urlsplit(url)
    scheme = SCHEMES[parts.scheme.lower()]
    try:
        if scheme == "s3":
            # built directly rather than from the URL: `from_uri` asks the network for the bucket's
            # region, which hangs where there is no network; the environment says the region instead
            endpoint = os.environ.get("AWS_ENDPOINT_URL")
            fs = pafs.S3FileSystem(region=os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
                                   or "us-east-1", endpoint_override=endpoint,
                                   scheme="http" if (endpoint or "").startswith("http://") else "https",
                                   connect_timeout=10, request_timeout=30)
            return fs, parts.netloc + parts.path
        if scheme == "gs":
            # built directly too: by default a request without credentials (no network) is retried
            # for 15 minutes
            from datetime import timedelta

            return pafs.GcsFileSystem(retry_time_limit=timedelta(seconds=ANSWER_TIMEOUT)), parts.netloc + parts.path
        fs, path = pafs.FileSystem.from_uri(f"{scheme}://{parts.netloc}{parts.path}")
        return fs, path
    except (OSError, ValueError, ImportError) as exc:
        raise UsageError(f"{url}: the {scheme} file system is not available here ({first_line(exc)})") from None


def list_files(url: str) -> list[tuple[str, int]]:
    """(URL, size) of the object `url` names, or of every object below it (code-point order of
    their relative paths, as folders are read locally).

    Raises:
        UsageError: no such object or prefix, or the file system cannot be read.
    """
    pafs = _pyarrow_fs()

    fs, path = filesystem(url)
    base = url.rstrip("/")
    try:
        info = answered(url, fs.get_file_info, path)
        if info.type == pafs.FileType.File:
            return [(url, info.size)]
        if info.type == pafs.FileType.NotFound:
            raise UsageError(f"{url}: no such file or folder")
        found = answered(url, fs.get_file_info, pafs.FileSelector(path.rstrip("/"), recursive=True))
    except OSError as exc:
        raise UsageError(f"{url}: cannot be listed ({first_line(exc)})") from None
    prefix = path.rstrip("/") + "/"
    files = sorted((f.path[len(prefix):], f.size) for f in found if f.type == pafs.FileType.File)
    return [(f"{base}/{relative}", size) for relative, size in files]


ANSWER_TIMEOUT = 30.0
"""Seconds an object store has to answer a listing (with no network, a client may retry for
many minutes)."""


def answered(url: str, call: Callable[..., T], *args: Any) -> T:
    """`call(*args)`, waited for at most ANSWER_TIMEOUT seconds, in a thread of its own: the
    client's blocking call does not return to Python, so Ctrl-C and SIGTERM would wait for it;
    this thread stays free to take them (the abandoned call ends with the process).

    Raises:
        UsageError: no answer in time.
    """
    import threading

    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append((True, call(*args)))
        except BaseException as exc:  # noqa: BLE001  (handed to the waiting thread)
            outcome.append((False, exc))

    worker = threading.Thread(target=run, name="tracelab-object-store", daemon=True)
    worker.start()
    deadline = time.monotonic() + ANSWER_TIMEOUT
    while worker.is_alive() and time.monotonic() < deadline:
        worker.join(0.1)
    if not outcome:
        raise UsageError(f"{url}: the object store did not answer within {ANSWER_TIMEOUT:g} s "
                         "(no network, or no credentials in the environment?)")
    ok, value = outcome[0]
    if not ok:
        raise value
    return value


def fetch(url: str, target: Path) -> None:
    """Copy the object at `url` to the local file `target` (in a task).

    Raises:
        OSError: the object cannot be read (the file is then reported as failed, as a local
            file that cannot be read is).
    """
    fs, path = filesystem(url)
    with fs.open_input_stream(path) as stream, open(target, "wb") as out:
        shutil.copyfileobj(stream, out, 1 << 20)


def store_filesystem(url: str) -> tuple[Any, str]:
    """The `pyarrow.fs` file system a store's files are written through, and the store's path in it
    (`url` as `tracelab.spark.layout.local_path` gives it: an absolute path or an object-store URL)."""
    if "://" not in url:
        return _pyarrow_fs().LocalFileSystem(), url
    return filesystem(url)


def list_folder(fs: Any, path: str) -> list[Any]:
    """The `FileInfo` of the entries of a folder of `fs` (none when it does not exist)."""
    return list(fs.get_file_info(_pyarrow_fs().FileSelector(path, allow_not_found=True)))


def put_file(local: Path, fs: Any, target: str) -> None:
    """Copy a local file to `target` in `fs`, whole or not at all (an object store's put is atomic;
    on a file system: a temporary name, then a rename)."""
    pafs = _pyarrow_fs()

    if isinstance(fs, pafs.LocalFileSystem):
        os.makedirs(os.path.dirname(target), exist_ok=True)
        partial = os.path.join(os.path.dirname(target), f"_{os.path.basename(target)}.{os.getpid()}.tmp")
        shutil.copyfile(local, partial)
        os.replace(partial, target)
        return
    with open(local, "rb") as source, fs.open_output_stream(target) as out:
        shutil.copyfileobj(source, out, 1 << 20)


def _pyarrow_fs() -> Any:
    """`pyarrow.fs`, typed loosely: its stubs do not export the file system classes."""
    import importlib

    return importlib.import_module("pyarrow.fs")


__all__ = ["SCHEMES", "fetch", "filesystem", "is_remote", "list_files", "list_folder", "local_path", "put_file",
           "store_filesystem"]
