"""Which paths an ingest reads: files, folders (recursively) and globs, a store's own files left out."""
from __future__ import annotations

import glob
import os
import stat
from collections.abc import Iterator, Sequence
from typing import NamedTuple

from tracelab.errors import UsageError

STORE_SUFFIXES = (".duckdb", ".wal", ".duckdb.tmp")
"""A store's own files: never read as traces, even inside a folder being ingested."""


class Input(NamedTuple):
    """One path to read, or to report as skipped (`skip` says why).

    The path stays text, as the OS gave it: a folder of 100k files already ingested is looked
    up by path, size and time, and never needs a `Path` object per file.
    """

    path: str
    skip: str | None = None


def scan_inputs(paths: Sequence[str | os.PathLike[str] | Input]) -> list[Input]:
    """Files, folders (recursively, in code-point order of relative paths) and globs, in order.

    What is not a regular file (a FIFO, a device, a dangling or looping link) and a store's
    own files (`STORE_SUFFIXES`) come back with the reason they are skipped: never read,
    never dropped silently.

    Raises:
        UsageError: a path that does not exist, or a pattern that matches nothing.
    """
    out: list[Input] = []
    for raw in paths:
        if isinstance(raw, Input):  # scanned already (the CLI scans once to size its progress bar)
            out.append(raw)
            continue
        text = os.fspath(raw)
        if os.path.isdir(text):
            found = list(_walk(text, ""))
            found.sort(key=lambda item: item[0])
            out.extend(item for _, item in found)
        elif os.path.lexists(text):
            out.append(_classify(text))
        elif glob.has_magic(text):
            matches = sorted(glob.glob(text, recursive=True))
            files = [_classify(m) for m in _not_through_links(text, matches) if not os.path.isdir(m)]
            if not files:
                raise UsageError(f"{text}: the pattern matches no file")
            out.extend(files)
        else:
            raise UsageError(f"{text}: no such file or folder")
    return out


def _not_through_links(pattern: str, matches: list[str]) -> Iterator[str]:
    """The matches of `pattern` that no link to a folder leads to, below the folders the pattern
    names outright: `**` follows such links (a link to its own parent loops until paths grow too
    long), a folder ingest does not, and neither does a glob."""
    parts = pattern.split(os.sep)
    fixed = next((i for i, part in enumerate(parts) if glob.has_magic(part)), len(parts))
    linked: dict[str, bool] = {}
    for match in matches:
        folders = match.split(os.sep)[:-1]
        through = (os.sep.join(folders[:depth]) for depth in range(fixed + 1, len(folders) + 1))
        if not any(linked.setdefault(folder, os.path.islink(folder)) for folder in through):
            yield match


def _walk(folder: str, prefix: str) -> Iterator[tuple[str, Input]]:
    """Every entry below `folder` that is not a folder, with its `/`-separated relative path.

    Links to folders are not followed (a looping link is then one skipped entry). A regular
    file is known from its directory entry, without a system call of its own.
    """
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        relative = prefix + entry.name
        if entry.is_dir(follow_symlinks=False):
            yield from _walk(entry.path, relative + "/")
        elif entry.is_file(follow_symlinks=False) and not entry.name.endswith(STORE_SUFFIXES):
            yield relative, Input(entry.path)
        else:
            yield relative, _classify(entry.path)


def _classify(path: str) -> Input:
    if os.path.basename(path).endswith(STORE_SUFFIXES):
        return Input(path, "a DuckDB store file, never read as traces")
    try:
        info = os.stat(path)
    except OSError as exc:
        if os.path.islink(path):
            return Input(path, f"a link that leads nowhere ({exc.strerror or exc})")
        return Input(path, f"cannot be read ({exc.strerror or exc})")
    if stat.S_ISDIR(info.st_mode):
        return Input(path, "a link to a folder (links to folders are not followed)")
    if not stat.S_ISREG(info.st_mode):
        kind = "a FIFO" if stat.S_ISFIFO(info.st_mode) else "a device or socket"
        return Input(path, f"not a regular file ({kind})")
    return Input(path)
