"""Reading a user's small input file (a suite, an effects file, a baseline, a query) with a cap.

Such a file is read whole; a path that names something endless (`/dev/zero`, a pipe that never
closes) or a file far larger than any real one is refused past `MAX_DOCUMENT_BYTES` instead of
filling memory.
"""
from __future__ import annotations

import os

from tracelab.errors import UsageError

MAX_DOCUMENT_BYTES = 256 * 1024 * 1024
"""The largest suite, effects, baseline or query file read (a real one is a few megabytes)."""


def read_capped(path: str | os.PathLike[str], what: str, shown: str | None = None,
                error: type[UsageError] = UsageError) -> bytes:
    """The bytes of the `what` file at `path` (e.g. "suite file"), at most MAX_DOCUMENT_BYTES.

    Raises:
        UsageError: (or `error`, a subclass) the file cannot be read, or holds more than MAX_DOCUMENT_BYTES (one line,
            naming the file as `shown`, the path as the user gave it).
    """
    shown = shown or str(path)
    limit = MAX_DOCUMENT_BYTES
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise error(f"{shown}: cannot read {what}: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise error(f"{shown}: cannot read {what}: larger than {limit / 2**20:,.0f} MB (is it the right file?)")
    return data
