"""Writing a report file (`check -o`, `--export-baseline`, `view -o`, `sql -o`, `cover -o`): one
way for every command (docs/cli.md §7).

- A regular file (or a new one) is written whole or not at all: into a temporary created
  exclusively in the target's folder (`tempfile.mkstemp`: O_CREAT | O_EXCL, a random name),
  then renamed over the target. A link planted where a temporary could go is never followed,
  and an interrupt or a full disk leaves no half-written report.
- A symlink is followed: the file it points to is written as above, in that file's folder; the
  link stays a link.
- A target that exists and is not a regular file (a device such as /dev/null, a FIFO) is
  written through, opened as it is: never replaced by a regular file.
"""
from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO

from tracelab.errors import UsageError

Document = str | bytes | Callable[[IO[bytes]], object]
"""What to write: text (as UTF-8), bytes, or a function that writes into a binary file."""


def write_file(path: str | os.PathLike[str], document: Document, what: str = "the report") -> None:
    """Write `document` to `path` as the module says.

    Raises:
        UsageError: the file cannot be written (one line: the path, `what`, the system's reason).
    """
    target = Path(os.path.realpath(path))  # a symlink (or a chain of them): the file it names
    try:
        existing = os.stat(target)
    except FileNotFoundError:
        existing = None
    except OSError as exc:
        raise UsageError(f"{path}: cannot write {what}: {exc.strerror or exc}") from None
    try:
        if existing is not None and not stat.S_ISREG(existing.st_mode):
            with open(target, "wb") as stream:  # a device, a FIFO: written through, as `>` does
                _write(stream, document)
        else:
            _replace(target, document, existing)
    except OSError as exc:
        raise UsageError(f"{path}: cannot write {what}: {exc.strerror or exc}") from None


def _replace(target: Path, document: Document, existing: os.stat_result | None) -> None:
    """Write a temporary made exclusively beside `target`, then rename it over `target`."""
    descriptor, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        # the mode the file would get from open(): the earlier file's, else 0o666 less the umask
        os.fchmod(descriptor, stat.S_IMODE(existing.st_mode) if existing else 0o666 & ~_umask())
        with os.fdopen(descriptor, "wb") as stream:
            _write(stream, document)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _write(stream: IO[bytes], document: Document) -> None:
    if callable(document):
        document(stream)
    else:
        stream.write(document.encode() if isinstance(document, str) else document)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


__all__ = ["Document", "write_file"]
