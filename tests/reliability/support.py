"""Helpers for the reliability tests: run the real `tracelab` in a subprocess, hold a store
busy, account for every line of an ingested file, mutate bytes and JSON documents."""
from __future__ import annotations

import contextlib
import functools
import io
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from tests.conftest import REPO
from tracelab.store import Store, open_store

BOM = b"\xef\xbb\xbf"


def tracelab(*args: str, cwd: Path | None = None, timeout: float = 120,
             **popen: Any) -> subprocess.CompletedProcess[str]:
    """Run ``python -m tracelab ARGS`` to completion (stdout, stderr captured as text)."""
    return subprocess.run([sys.executable, "-m", "tracelab", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, **popen)


def run_cli(*args: str) -> tuple[int, str, str]:
    """Run `tracelab.cli.main` in this process, through its error boundary: (exit code, stdout,
    stderr). Faster than `tracelab`, for commands that cannot hang."""
    from tracelab.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(list(args))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    return code, out.getvalue(), err.getvalue()


def start_tracelab(*args: str, **popen: Any) -> subprocess.Popen[str]:
    """Start ``python -m tracelab ARGS`` without waiting for it."""
    return subprocess.Popen([sys.executable, "-m", "tracelab", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **popen)


class Holder:
    """A process that ingests `paths` into `store` and stops in the middle of the last file's
    transaction (after staging it, before writing it) until released.

    ``with Holder(...) as h:`` waits until the process holds the store; leaving the block
    releases it and waits for the ingest to finish (its report is ``h.result``).
    """

    SCRIPT = textwrap.dedent("""
        import sys
        import tracelab.ingest.batches as ingest_batches
        import tracelab.ingest.writer as ingest_writer
        from tracelab.store import open_store

        store_path, *paths = sys.argv[1:]
        run_script = ingest_writer.run_script
        seen = []

        def pausing(con, name, params=None):
            if name == "ingest/insert":
                seen.append(name)
                if len(seen) == len(paths):  # the last file: stop inside its transaction
                    print("holding", flush=True)
                    sys.stdin.readline()
            return run_script(con, name, params)

        ingest_writer.run_script = pausing
        ingest_batches.BATCH_RECORDS = 1  # small files share transactions; here, one file per transaction
        with open_store(store_path) as store:
            report = store.ingest(paths)
        print("done", report.added, report.quarantined, flush=True)
    """)

    def __init__(self, store: Path, *paths: Path) -> None:
        self.args = [str(store), *map(str, paths)]
        self.result: str | None = None

    def __enter__(self) -> Holder:
        self.proc = subprocess.Popen([sys.executable, "-c", self.SCRIPT, *self.args],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        assert self.proc.stdout.readline().strip() == "holding"
        return self

    @property
    def pid(self) -> int:
        return self.proc.pid

    def release(self) -> str:
        """Let the ingest finish; its last line (``done ADDED QUARANTINED``)."""
        if self.result is None:
            out, _ = self.proc.communicate("go\n", timeout=120)
            self.result = out.strip()
        return self.result

    def __exit__(self, *exc: object) -> None:
        self.release()


def nonblank_lines(content: bytes) -> list[int]:
    """1-based numbers of the lines that hold a record (trace-format §5: LF ends a line, a CR
    before it and a leading BOM are dropped, whitespace-only lines are skipped)."""
    if content.startswith(BOM):
        content = content[len(BOM):]
    lines = content.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return [i for i, line in enumerate(lines, 1) if line.removesuffix(b"\r").strip()]


def account(store: Store, path: Path) -> tuple[list[int], list[int], list[str]]:
    """The source lines of the stored episodes and of the quarantined records of one file, and
    the quarantine reasons."""
    uri = str(path)
    stored = store.sql("SELECT source_line FROM episodes WHERE source_uri = ? ORDER BY 1", [uri])
    held = store.sql("SELECT line, reason FROM quarantine WHERE source_uri = ? ORDER BY line", [uri])
    return stored["source_line"].to_list(), held["line"].to_list(), held["reason"].to_list()


# --- mutation -----------------------------------------------------------------------------

@functools.lru_cache
def json_values(max_leaves: int = 12) -> st.SearchStrategy[Any]:
    """Any JSON value: unbounded integers, finite floats, any text (lone surrogates too)."""
    leaves = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
              | st.text(max_size=20))
    return st.recursive(leaves, lambda inner: st.lists(inner, max_size=4)
                        | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=max_leaves)


@st.composite
def mutated_bytes(draw: st.DrawFn, data: bytes, newlines: bool = False) -> bytes:
    """`data` after one to three byte edits: cut, insert, overwrite, truncate, repeat a slice."""
    for _ in range(draw(st.integers(1, 3))):
        size = len(data)
        at = draw(st.integers(0, size))
        end = draw(st.integers(at, min(size, at + 16)))
        op = draw(st.sampled_from(["cut", "insert", "overwrite", "truncate", "repeat"]))
        noise = draw(st.binary(min_size=1, max_size=8))
        if op == "cut":
            data = data[:at] + data[end:]
        elif op == "insert":
            data = data[:at] + noise + data[at:]
        elif op == "overwrite":
            data = data[:at] + noise + data[at + len(noise):]
        elif op == "truncate":
            data = data[:at]
        else:
            data = data[:end] + data[at:end] + data[end:]
    return data if newlines else data.replace(b"\n", b" ")


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            out += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            out += _paths(item, (*prefix, i))
    return out


@st.composite
def mutated_json(draw: st.DrawFn, value: Any) -> Any:
    """`value` with one node replaced by any JSON value, removed from its parent, or doubled."""
    value = json.loads(json.dumps(value))  # a private copy
    path = draw(st.sampled_from(_paths(value)))
    replacement = draw(json_values())
    if not path:
        return replacement
    parent = value
    for key in path[:-1]:
        parent = parent[key]
    key = path[-1]
    op = draw(st.sampled_from(["replace", "remove", "double"]))
    if op == "replace":
        parent[key] = replacement
    elif op == "remove":
        del parent[key]
    elif isinstance(parent, list):
        parent.insert(key, parent[key])
    else:
        parent[key] = [parent[key], parent[key]]
    return value


def encode(value: Any, ascii_only: bool) -> bytes:
    """One JSON line; non-ASCII written raw when not `ascii_only` (lone surrogates as CESU bytes)."""
    return json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", errors="surrogatepass")


# --- shared by the reliability tests of issue 14 ---------------------------------------------------

SAMPLES = REPO / "sample_traces"
SUITE = SAMPLES / "suite.yaml"
KEY = "sk-live-Qx81PAYMENTS"


def one_line_error(err: str) -> bool:
    """A single ``error: ...`` line: no traceback, no click ``Aborted!``."""
    return err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err and "Aborted" not in err


def suite_file(folder: Path, assertions: str, name: str = "suite.yaml", select: str = "") -> Path:
    """A one-case suite (case `c`) with these assertions (YAML list items)."""
    path = folder / name
    path.write_text("suite: s\nmin_cases: 1\ncases:\n  - id: c\n    expect: {must_not_leak: [never-there]}\n"
                    + (f"    select: {select}\n" if select else "")
                    + "    assertions:\n" + textwrap.indent(textwrap.dedent(assertions).strip("\n"), "      ")
                    + "\n", encoding="utf-8")
    return path


def ingested(folder: Path, *runs: dict, name: str = "s.duckdb") -> Path:
    traces = folder / f"{name}.jsonl"
    traces.write_text("".join(json.dumps(r) + "\n" for r in runs), encoding="utf-8")
    store = folder / name
    with open_store(store) as opened:
        opened.ingest([traces])
    return store
