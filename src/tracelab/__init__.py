"""tracelab: offline replay and analytics of recorded LLM-agent traces.

Public API (README "From Python")::

    import tracelab

    store = tracelab.open_store("tracelab.duckdb")
    store.ingest(["traces/"])
    frame = store.sql("SELECT * FROM executed_writes")
    run = store.check("suite.yaml")
    suite = tracelab.load_suite("suite.yaml")

The packages follow the pipeline, each importing only those before it (ruff's banned-api rule,
tests/test_layers.py): the foundation modules (`errors`, `sqlfiles`, `frames`, `bulk_insert`,
`native_keys`, `globs`, `documents`, `version`) -> `formats` -> `ingest` -> `store` -> `suite` -> `engine`
-> `results` -> `view` -> `api` (the public API) -> `cli`; `generate` and `spark` beside them.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tracelab.version import __version__

__all__ = ["__version__", "Store", "load_suite", "open_store"]

if TYPE_CHECKING:
    from tracelab.api import Store, open_store
    from tracelab.suite import load_suite


def __getattr__(name: str) -> Any:
    # Heavy imports (duckdb, polars) only when used, so `tracelab --help` stays fast.
    if name in ("open_store", "Store"):
        from tracelab import api

        return getattr(api, name)
    if name == "load_suite":
        from tracelab.suite import load_suite

        return load_suite
    raise AttributeError(f"module 'tracelab' has no attribute {name!r}")
