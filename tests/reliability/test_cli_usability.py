"""Usability: `sql` reads a query from a file or stdin, NO_COLOR is honoured on a terminal, `info`
as JSON, `cover` and `lint` to a file (issue 14, items 13 and 14).
"""
from __future__ import annotations

import json
import os
import pty
import subprocess
import sys

from tests.reliability.support import SUITE, one_line_error, run_cli, tracelab


def test_sql_reads_a_query_from_a_file_stdin_or_a_leading_comment(tmp_path, sample_store, monkeypatch):
    commented = "-- how many runs?\nSELECT count(*) AS n FROM episodes"
    query_file = tmp_path / "q.sql"
    query_file.write_text(commented)
    expected = run_cli("sql", "SELECT count(*) AS n FROM episodes", "--store", str(sample_store), "--format", "csv")
    assert expected[0] == 0
    for args in ([commented], ["--format", "csv", commented], ["-f", str(query_file)], ["--file", str(query_file)]):
        fmt = [] if "--format" in args else ["--format", "csv"]
        assert run_cli("sql", *args, *fmt, "--store", str(sample_store)) == expected, args
    done = tracelab("sql", "-", "--format", "csv", "--store", str(sample_store), input=commented)
    assert (done.returncode, done.stdout) == (0, expected[1])
    for args, message in ((["-f", str(tmp_path / "none.sql")], "cannot read the query"),
                          ([], "no query"), (["SELECT 1", "-f", str(query_file)], "not both")):
        code, out, err = run_cli("sql", *args, "--store", str(sample_store))
        assert (code, out) == (2, "") and one_line_error(err) and message in err, err


def _on_a_terminal(*args: str, env: dict[str, str]) -> bytes:
    """The output of ``tracelab ARGS`` run with a pseudo-terminal as stdout and stderr."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "tracelab", *args], stdout=follower, stderr=follower,
                            env={**os.environ, **env})
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    proc.wait(timeout=60)
    os.close(leader)
    return b"".join(chunks)


def test_no_color_is_honoured_on_a_terminal(sample_store):
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    for args in (["check", str(SUITE), "--no-save"], ["sql", "SELECT 1 AS one"], ["info", "--store", "/nowhere"]):
        store = [] if "--store" in args else ["--store", str(sample_store)]
        colored = _on_a_terminal(*args, *store, env={**env, "TERM": "xterm"})
        plain = _on_a_terminal(*args, *store, env={**env, "TERM": "xterm", "NO_COLOR": "1"})
        assert b"\x1b[" in colored, args
        assert b"\x1b[" not in plain and plain, args


def test_info_as_json_and_cover_and_lint_to_a_file(tmp_path, sample_store):
    code, out, err = run_cli("info", "--format", "json", "--store", str(sample_store))
    assert (code, err) == (0, "")
    info = json.loads(out)
    assert info["tables"]["episodes"] > 0 and {"format", "files"} <= set(info["formats"][0])
    for command in ("cover", "lint"):
        report = tmp_path / f"{command}.json"
        shown = run_cli(command, str(SUITE), "--store", str(sample_store), "--format", "json")
        written = run_cli(command, str(SUITE), "--store", str(sample_store), "--format", "json", "-o", str(report))
        assert written[0] == shown[0] and written[1] == ""
        assert json.loads(report.read_text())["suite_path"] == json.loads(shown[1])["suite_path"]
