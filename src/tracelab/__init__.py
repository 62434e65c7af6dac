"""tracelab: offline replay and analytics of recorded LLM-agent traces.

Public API::

    store = tracelab.open_store("tracelab.duckdb")
    store.ingest(["traces/"])
    frame = store.sql("SELECT * FROM executed_writes")
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["__version__", "open_store", "Store"]

if TYPE_CHECKING:
    from tracelab.store import Store, open_store


def __getattr__(name: str) -> Any:
    # Heavy imports (duckdb, polars) only when used, so `tracelab --help` stays fast.
    if name in ("open_store", "Store"):
        from tracelab import store

        return getattr(store, name)
    raise AttributeError(f"module 'tracelab' has no attribute {name!r}")
