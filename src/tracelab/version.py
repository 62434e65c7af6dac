"""The version of tracelab, in a module of its own so that any stage can name it without importing
`tracelab` itself, whose lazy re-exports sit above every stage (`tracelab.api`)."""
from __future__ import annotations

__version__ = "0.1.0"
