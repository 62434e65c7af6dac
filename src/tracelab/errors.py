"""One exception hierarchy; the CLI maps each class to an exit code, once.

Messages say what failed, where (file, line, case, key) and how to fix it.
"""
from __future__ import annotations

import weakref
from typing import Any


class TracelabError(Exception):
    """Base of every error tracelab reports to a user (never with a traceback)."""

    exit_code = 1


class UsageError(TracelabError):
    """A bad flag, argument or option value, a missing path or suite file (exit 2)."""

    exit_code = 2


class SuiteError(UsageError):
    """An invalid, ineffective or contradictory suite (exit 2)."""


class StoreError(TracelabError):
    """The store cannot be opened, is locked, corrupt, or read-only (exit 3)."""

    exit_code = 3


class DataError(StoreError):
    """Input data that cannot be read at all: a truncated archive, a file that changed while it was
    read (exit 3). A path that does not exist is a `UsageError` (exit 2)."""


class Interrupted(TracelabError):
    """Ctrl-C or SIGTERM ended the command (exit 130, docs/trace-format.md §6).

    The message says what was completed and what was not; the store holds exactly the
    completed work. Library code that can be interrupted mid-way (ingest, check, export)
    turns `KeyboardInterrupt` into this error with its own summary.
    """

    exit_code = 130


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (its type's name when it has none): DuckDB's and
    pyarrow's messages go on for lines of context that a one-line error leaves out."""
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def out_of_file_handles(command: str | None) -> TracelabError:
    """The one line for running out of file handles (EMFILE: `ulimit -n`; ingest's workers
    each hold pipes and files), whatever opened the one too many."""
    import resource

    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return TracelabError(f"`tracelab {command}` needs more file handles than this process may open "
                         f"({soft}; too many open files): raise the limit with `ulimit -n`, or set "
                         "TRACELAB_WORKERS to fewer workers; the store holds only what was committed "
                         "before it")


def is_interrupt(exc: BaseException) -> bool:
    """True for Ctrl-C or SIGTERM, also when it arrived while DuckDB ran a query.

    DuckDB's Python client checks for signals between tasks of a query and turns one into a
    plain ``RuntimeError("Query interrupted")``; py4j (Spark) raises its own error from within
    the KeyboardInterrupt.
    """
    if isinstance(exc, KeyboardInterrupt):
        return True
    if type(exc).__name__ == "InterruptException":  # duckdb's, after `interrupt_queries`
        return True
    if type(exc) is RuntimeError and str(exc) == "Query interrupted":
        return True
    # raised while a KeyboardInterrupt was handled: py4j turns Ctrl-C during a Spark job into a
    # Py4JJavaError (the JVM call it cut short), with the interrupt as its context
    seen: set[int] = set()
    cause = exc.__cause__ or exc.__context__
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False


_QUERYING: weakref.WeakSet[Any] = weakref.WeakSet()


def interruptible(con: Any) -> Any:
    """`con` (a DuckDB connection or cursor), registered so that Ctrl-C or SIGTERM stop the
    query it runs (`interrupt_queries`); returned for chaining."""
    _QUERYING.add(con)
    return con


def interrupt_queries() -> None:
    """Interrupt whatever every registered connection is running.

    A signal handler's KeyboardInterrupt alone can leave a DuckDB query running: DuckDB then
    waits for its running tasks, which do not look at Python's signals (seen with a long
    `range()` scan on DuckDB 2.0: the process never ended). ``interrupt()`` makes them stop.
    """
    for con in list(_QUERYING):
        try:
            con.interrupt()
        except Exception:  # noqa: BLE001  (closed meanwhile: nothing of it runs)
            pass

