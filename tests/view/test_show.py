"""`tracelab show EPISODE_ID`: the header, every step, failing steps marked against a saved
check (leaked strings' fields withheld), clipped to the terminal's width unless --full."""
from __future__ import annotations

import io

from tests.reliability.support import run_cli
from tracelab.cli.console import terminal_width, wants_color


def lines(out: str) -> list[str]:
    return out.splitlines()


def test_show_prints_the_header_and_every_step(sample_store, monkeypatch):
    monkeypatch.setenv("COLUMNS", "160")
    store, _ = sample_store
    code, out, err = run_cli("show", "bk-008", "--store", str(store))
    assert (code, err) == (0, "")
    head = lines(out)[0]
    for value in ("bk-008", "bank-agent 2.0.1", "gpt-4o", "delete-account", "completed", "reward 0", "steps 5"):
        assert value in head
    rows = [line.split() for line in lines(out) if line.split() and line.split()[0].isdigit()]
    assert [(r[0], r[1]) for r in rows] == [("0", "user"), ("1", "tool_call"), ("2", "tool_result"),
                                            ("3", "confirmation"), ("4", "assistant")]
    assert "lookup_customer  ok      read" in out  # tool, status and effect badges
    assert "✗" not in out  # no check asked for: nothing marked, nothing withheld
    assert "\"account\":\"ACCT-55120871\"" in out


def test_show_check_marks_failing_steps_and_withholds_leaked_text(sample_store, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    store, run_id = sample_store
    code, out, err = run_cli("show", "bk-008", "--store", str(store), "--check", run_id)
    assert (code, err) == (0, "")
    marked = [line for line in lines(out) if line.startswith("✗")]
    assert len(marked) == 1 and marked[0].split()[1:3] == ["3", "confirmation"]
    flat = " ".join(out.split())  # a notice or a reason may wrap
    assert "✗ must_not_leak[3] LEAKED \"Jonas Weißmüller\"" in flat
    assert "[text withheld: it holds the leaked string \"ACCT-55120871\"]" in flat
    assert "for good?" not in flat and "Close savings account" not in flat and "holder" not in flat
    assert run_cli("show", "bk-008", "--store", str(store), "--check", "latest")[1] == out


def test_show_check_names_failures_of_the_run_as_a_whole(sample_store, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    store, run_id = sample_store
    code, out, _ = run_cli("show", "bk-010", "--store", str(store), "--check", run_id)
    assert code == 0
    flat = " ".join(out.split())
    assert "✗ whole run confirmations_raised[0]" in flat  # a confirmation that never happened
    assert "3 failed results, 2 at a step" in flat


def test_show_clips_to_the_terminal_width_and_full_shows_everything(sample_store, monkeypatch):
    store, _ = sample_store
    monkeypatch.setenv("COLUMNS", "100")
    code, out, _ = run_cli("show", "sp-001", "--store", str(store))
    assert code == 0 and max(len(line) for line in lines(out)) <= 100
    assert "…" in out
    code, full, _ = run_cli("show", "sp-001", "--store", str(store), "--full")
    assert code == 0 and max(len(line) for line in lines(full)) <= 100
    assert len("".join(full.split())) > len("".join(out.split())) + 300  # the 502-character retrieval, whole


def test_show_errors_are_one_line(sample_store):
    store, _ = sample_store
    code, out, err = run_cli("show", "no-such-run", "--store", str(store))
    assert code == 2 and "no stored run with episode_id 'no-such-run'" in err and "Traceback" not in err
    code, out, err = run_cli("show", "bk-008", "--store", str(store), "--check", "feedface")
    assert code == 2 and "no saved check run 'feedface'" in err


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colour_only_on_a_terminal_and_never_with_no_color(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert wants_color(_Terminal()) and not wants_color(io.StringIO())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not wants_color(_Terminal())


def test_tables_use_the_terminal_width(sample_store, monkeypatch):
    store, _ = sample_store
    monkeypatch.setenv("COLUMNS", "200")
    assert terminal_width() == 200
    code, out, _ = run_cli("sql", "SELECT repeat('x', 150) AS wide, 1 AS n", "--store", str(store))
    assert code == 0 and "x" * 150 in out  # one line, not folded at 80 columns


def test_a_leak_the_stored_text_does_not_show_is_found_through_the_transcript(sample_store):
    # what the field-by-field search cannot see (an escape, a number written otherwise) is
    # located the way must_not_leak searched: pretend it saw nothing, the transcript still finds all
    import polars as pl

    from tracelab.store import open_store
    from tracelab.view.show import _holding, saved_failures

    store, run_id = sample_store
    with open_store(store, read_only=True) as opened:
        failures = saved_failures(opened.con, run_id, ["bk-008"])
        nothing = pl.DataFrame(schema={"episode_id": pl.Utf8, "needle": pl.Utf8})
        holding = _holding(opened.con, failures, nothing)
    assert holding == {("bk-008", 3): {"data": {"ACCT-55120871", "Jonas Weißmüller"}, "text": {"ACCT-55120871"}}}
