"""Reading a Delta store: the Delta Lake tables `--engine spark` writes (tracelab.spark.layout).

A Delta store is a folder or object-store URL holding one Delta table per store table
(`episodes/`, `steps/`, ... partitioned by `ep_bucket`; `sources/`, `quarantine/`, and once a
check saved one `check_runs/`, `check_results/`) and a head table `_tracelab/`. Each table
commits on its own; the head holds one row, replaced by each store commit, naming the version of
every table that belongs to the store's last complete commit (`versions`, JSON). Readers read each
table at that version, so a writer killed between two tables' commits is never seen half done.
The head's description records the store's `ep_bucket` count.

Object-store URLs (``s3://`` ...) are read by delta-rs with the credentials of the environment
(AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION, AWS_ENDPOINT_URL, AWS_ALLOW_HTTP).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from tracelab.errors import StoreError, first_line

HEAD = "_tracelab"
VERSIONS_COLUMN = "versions"
LAYOUT = "tracelab.delta/v1"
URL_SCHEMES = frozenset({"s3", "s3a", "gs", "gcs", "az", "abfs", "abfss"})
"""Object-store URL schemes a Delta store may live under (delta-rs reads them)."""


def is_url(path: str | os.PathLike[str]) -> bool:
    """Whether `path` is an object-store URL (``s3://bucket/prefix``...)."""
    text = os.fspath(path)
    return "://" in text and urlsplit(text).scheme.lower() in URL_SCHEMES


def delta_url(path: str | os.PathLike[str]) -> str:
    """The store's location as delta-rs names it: an absolute path, or the URL (``s3a`` as ``s3``)."""
    text = os.fspath(path)
    if text.startswith("file://"):
        text = urlsplit(text).path
    if is_url(text):
        scheme, rest = text.split("://", 1)
        return ("s3" if scheme.lower() in ("s3a", "s3n") else scheme.lower()) + "://" + rest.rstrip("/")
    return os.path.abspath(text)


def is_delta_store(path: str | os.PathLike[str]) -> bool:
    """Whether `path` names a Delta store (its head table exists)."""
    url = delta_url(path)
    if not is_url(url):
        return os.path.isdir(os.path.join(url, HEAD, "_delta_log"))
    DeltaTable = _delta_table()  # noqa: N806 - the class
    from deltalake.exceptions import TableNotFoundError

    try:
        # not `DeltaTable.is_deltatable`: its listing may retry for minutes where a table is missing
        DeltaTable(f"{url}/{HEAD}")
    except TableNotFoundError:
        return False
    return True


def _delta_table() -> Any:
    """`deltalake.DeltaTable`, or a one-line error naming the package to install.

    Raises:
        StoreError: deltalake is not installed.
    """
    try:
        from deltalake import DeltaTable
    except ImportError:
        raise StoreError("this store is a Delta store (written by --engine spark); reading it needs "
                         "deltalake: pip install 'tracelab[spark]'") from None
    return DeltaTable


@dataclass(frozen=True)
class Head:
    """The store's last complete commit: its bucket count and the version of each table."""

    url: str
    buckets: int
    versions: dict[str, int]
    head_version: int


def read_head(path: str | os.PathLike[str]) -> Head:
    """The head of the Delta store at `path`.

    Raises:
        StoreError: no Delta store there, or its head cannot be read.
    """
    DeltaTable = _delta_table()  # noqa: N806 - the class
    url = delta_url(path)
    try:
        head = DeltaTable(f"{url}/{HEAD}")
        meta = json.loads(head.metadata().description or "{}")
        buckets = int(meta["ep_buckets"])
        rows = head.to_pyarrow_table(columns=[VERSIONS_COLUMN]).column(VERSIONS_COLUMN).to_pylist()
        versions = {k: int(v) for k, v in json.loads(rows[0]).items()}
    except Exception as exc:  # noqa: BLE001 - delta-rs, JSON and key errors alike
        raise StoreError(f"{url}: not a readable tracelab Delta store ({first_line(exc)})") from None
    return Head(url, buckets, versions, head.version())


def table_datasets(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A pyarrow dataset per table of the store, each at the version of the store's last commit."""
    DeltaTable = _delta_table()  # noqa: N806 - the class

    head = read_head(path)
    out: dict[str, Any] = {}
    for table, version in sorted(head.versions.items()):
        try:
            out[table] = DeltaTable(f"{head.url}/{table}", version=version).to_pyarrow_dataset()
        except Exception as exc:  # noqa: BLE001 - delta-rs raises its own errors
            raise StoreError(f"{head.url}/{table}: the Delta table cannot be read at version {version} "
                             f"({first_line(exc)})") from None
    return out


__all__ = ["HEAD", "Head", "LAYOUT", "URL_SCHEMES", "VERSIONS_COLUMN", "delta_url", "is_delta_store", "is_url",
           "read_head", "table_datasets"]
