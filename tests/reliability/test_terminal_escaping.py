"""Stored strings never drive the terminal (issue 29, "Security"): escape sequences (OSC 52
clipboard writes, OSC 8 links, OSC 0 titles, cursor moves, line erases), C0/C1 controls and
bidi overrides are printed visibly escaped, and Rich markup in stored text is printed as text,
by `show`, `sql` tables, `info`, `effects list/unknown`, the text report of `check`, `cover`
and `lint`."""
from __future__ import annotations

import json
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import episode
from tests.reliability.support import run_cli

HOSTILE = ["\x1b]52;c;cm0gLXJmIC8K\x07", "\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\",
           "\x1b]0;pwned title\x07", "\x1b[2J", "\x1b[1A", "\x1b[5;5H", "\x1b[2K", "\x1b[31m", "\r",
           "\x9b2J", "\x9d0;c1\x9c", "\x85", "\x08", "\x00", "\x7f", "\u202e", "\u202a", "\u2066",
           "\u2069", "\u200f", "[bold]", "[/]", "[link=https://evil.example]", "[/link]", "\n", "\t"]
FORBIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""What no output may hold: every C0 control but newline and tab, DEL, C1, and bidi controls."""

SUITE = """\
suite: hostile
min_cases: 1
cases:
  - id: c
    expect: {must_not_leak: [zz-none], termination: completed}
    assertions:
      - {type: tool_status, id: ok, tool: '*'}
      - {type: trace_tool_sequence, id: none, sequence: [], allow_other_tools: false}
"""

hostile_text = st.lists(st.one_of(st.sampled_from(HOSTILE), st.text(max_size=4)), min_size=1, max_size=6
                        ).map("".join)


def _store(tmp_path, texts: list[str]) -> tuple[str, str]:
    """A store of one run whose every stored string field holds hostile text; its suite."""
    name, agent, model, termination, arg, text, output, error, case = texts
    run = episode(
        "run-1",
        {"kind": "user", "text": text},
        {"kind": "tool_call", "name": name, "call_id": "c1", "args": {"q": arg}},
        {"kind": "tool_result", "call_id": "c1", "status": "error", "text": text, "error": error},
        {"kind": "tool_call", "name": "[/]", "call_id": "c2", "args": {}},
        output=output, case_id="c", agent=agent, agent_version=case, model=model, termination=termination)
    traces = tmp_path / "t.jsonl"
    traces.write_text(json.dumps(run) + "\n")
    store = str(tmp_path / "s.duckdb")
    assert run_cli("ingest", str(traces), "--store", store, "-q")[0] == 0
    suite = tmp_path / "suite.yaml"
    suite.write_text(SUITE)
    return store, str(suite)


def _outputs(store: str, suite: str) -> dict[str, str]:
    commands = {
        "check": ["check", suite, "--store", store, "--all-results"],
        "show": ["show", "run-1", "--store", store],
        "show --full": ["show", "run-1", "--store", store, "--full"],
        "show --check": ["show", "run-1", "--store", store, "--check", "latest", "--full"],
        "sql": ["sql", "SELECT * FROM steps", "--store", store],
        "sql episodes": ["sql", "SELECT * FROM episodes", "--store", store],
        "info": ["info", "--store", store],
        "effects unknown": ["effects", "unknown", "--store", store],
        "effects list": ["effects", "list", "--store", store],
        "cover": ["cover", suite, "--store", store],
        "lint": ["lint", suite, "--store", store],
    }
    out = {}
    for label, args in commands.items():
        code, text, err = run_cli(*args)
        assert "Traceback" not in err and code in (0, 1), (label, code, err)
        out[label] = text + err
    return out


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(hostile_text, min_size=9, max_size=9))
def test_no_stored_string_reaches_the_terminal_raw(tmp_path_factory, texts):
    tmp_path = tmp_path_factory.mktemp("fuzz")
    store, suite = _store(tmp_path, texts)
    for label, text in _outputs(store, suite).items():
        assert FORBIDDEN.search(text) is None, (label, FORBIDDEN.search(text))


def test_every_escape_and_markup_is_printed_visibly(tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")
    texts = ["".join(HOSTILE), "[bold]agent[/bold]", "[link=https://evil.example]model[/link]",
             "\x1b]0;t\x07done", "\u202eevil", "[red]text[/red]", "\x1b[2Kout", "\x9berr", "[/]"]
    store, suite = _store(tmp_path, texts)
    found = _outputs(store, suite)
    for label, text in found.items():
        assert FORBIDDEN.search(text) is None, (label, FORBIDDEN.search(text))
    shown = found["show --full"]
    for visible in ("[bold]agent[/bold]", "[link=https://evil.example]model[/link]", "\\x1b]0;t\\x07done",
                    "\\u202eevil", "[red]text[/red]", "\\x1b[2Kout", "\\x9berr", "\\x1b]52;c;cm0gLXJmIC8K\\x07"):
        assert visible in shown, visible
    assert "[/]" in found["effects unknown"] and "[/]" in found["sql"]
    assert "\\x1b]52;c;" in found["sql"] and "\\x1b]52;c;" in found["effects unknown"]
