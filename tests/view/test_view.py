"""`tracelab view`: one self-contained HTML file of a saved check (docs/cli.md §2, `tracelab view`)."""
from __future__ import annotations

import json
import re

import pytest

from tests.reliability.support import run_cli
from tracelab.view import build_report


def written(sample_store, tmp_path, *args: str) -> str:
    store, _ = sample_store
    out = tmp_path / "report.html"
    code, stdout, err = run_cli("view", "--store", str(store), "-o", str(out), *args)
    assert (code, err) == (0, ""), err
    assert stdout.startswith(f"wrote {out} (")
    return out.read_text(encoding="utf-8")


def embedded(html: str) -> dict:
    return json.loads(re.search(r'<script type="application/json" id="tl-runs">(.*?)</script>', html, re.S).group(1))


def test_the_file_refers_to_nothing_outside_itself(sample_store, tmp_path):
    html = written(sample_store, tmp_path)
    assert "Content-Security-Policy\" content=\"default-src 'none';" in html  # the browser fetches nothing
    assert not re.search(r"\b(src|href)=\"(?!#)", html)  # every link is to a place in the file
    assert "http://" not in html and "https://" not in html and "<link" not in html and "@import" not in html


def test_summary_cases_failing_first_and_failing_runs(sample_store, tmp_path):
    html = written(sample_store, tmp_path)
    assert '<div class="n">7/13</div><div class="l">cases passed</div>' in html
    order = re.findall(r'<details class="case (fail|ok)" id="c\d+" data-case="([^"]+)"', html)
    assert [tone for tone, _ in order] == ["fail"] * 6 + ["ok"] * 7
    assert {case for tone, case in order if tone == "fail"} == {
        "roster-other-org", "money-movement", "delete-account", "kb-search", "password-reset", "log-triage"}
    assert 'href="#run-bk-008"' in html
    runs = embedded(html)
    strings, bk008 = runs["s"], runs["runs"]["bk-008"]
    failed = [step for step in bk008["steps"] if step[6]]
    assert [step[0] for step in failed] == [3]
    assert [strings[i] for i in failed[0][6][0]][0] == "must_not_leak[3]"


def test_coverage_matrix_links_each_cell_to_its_assertion(sample_store, tmp_path):
    html = written(sample_store, tmp_path)
    matrix = html[html.index('<section id="s-matrix">'):]
    cells = re.findall(r'<td style="background:[^"]+"><a href="#(a\d+-\d+)"', matrix)
    assert len(cells) > 100
    assert all(f'id="{anchor}"' in html for anchor in cells)
    assert ('title="assign-shift × no-unassigning: failed in 0 of 3 runs; exercised in 0 (no 3, unknown 0)">0%'
            in matrix)


def test_max_runs_caps_failing_runs_per_case_and_says_so(sample_store, tmp_path):
    html = written(sample_store, tmp_path, "--max-runs", "1")
    report = build_report(sample_store[0], max_runs=1)
    left_out = sum(case.left_out for case in report.cases)
    assert left_out > 0 and all(len(case.failing_runs) <= 1 for case in report.cases)
    assert f"{left_out:,} failing runs are left out" in html
    assert len(embedded(html)["runs"]) == len({r for case in report.cases for r in case.failing_runs})


def test_view_picks_a_run_and_refuses_what_is_not_there(sample_store, tmp_path):
    store, run_id = sample_store
    assert run_id in written(sample_store, tmp_path, "--run", run_id)
    code, _, err = run_cli("view", "--store", str(store), "--run", "feedface", "-o", str(tmp_path / "x.html"))
    assert code == 2 and "no saved check run 'feedface'" in err
    assert not (tmp_path / "x.html").exists()


def test_view_without_a_saved_check_says_how_to_make_one(tmp_path, write_jsonl):
    from tracelab.store import open_store

    with open_store(tmp_path / "s.duckdb") as store:
        store.ingest([write_jsonl([{"episode_id": "e1", "steps": []}])])
    code, _, err = run_cli("view", "--store", str(tmp_path / "s.duckdb"), "-o", str(tmp_path / "r.html"))
    assert code == 2 and "holds no saved check; run `tracelab check SUITE` first" in err


def test_an_unwritable_output_is_one_line(sample_store, tmp_path):
    store, _ = sample_store
    code, _, err = run_cli("view", "--store", str(store), "-o", str(tmp_path / "missing" / "r.html"))
    assert code == 2 and "cannot write" in err and "Traceback" not in err


@pytest.mark.parametrize("interrupt", [KeyboardInterrupt, "duckdb"])
def test_an_interrupted_view_says_the_file_was_not_written(sample_store, tmp_path, monkeypatch, interrupt):
    # Ctrl-C arrives as KeyboardInterrupt in Python, or as DuckDB's InterruptException while a
    # query runs (errors.is_interrupt): either way the one line says what became of the file
    import duckdb

    import tracelab.view

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt if interrupt is KeyboardInterrupt else duckdb.InterruptException("INTERRUPT Error")

    monkeypatch.setattr(tracelab.view, "build_report", interrupted)
    store, _ = sample_store
    out = tmp_path / "r.html"
    code, stdout, err = run_cli("view", "--store", str(store), "-o", str(out))
    assert (code, stdout) == (130, "")
    assert err == f"error: view interrupted: {out} was not written (an earlier file there is unchanged)\n"
    assert not out.exists()


def test_each_step_shows_what_it_holds_clipped_or_withheld(monkeypatch):
    # the report's steps are written set-wise in DuckDB: every case the timeline draws, on one hand-made run
    # whose texts are all past the file's cap (0 here), so clipped (tests/view/test_view_evidence.py: whole)
    import duckdb

    import tracelab.view.runs as runs
    from tracelab.sqlfiles import run_script
    from tracelab.view.runs import CLIP, runs_json
    from tracelab.view.show import Failure, withheld_notice

    monkeypatch.setattr(runs, "TEXT_CAP", 0)
    con = duckdb.connect()
    con.execute("CREATE TEMP TABLE view_shown_steps (episode_id VARCHAR, idx INTEGER, kind VARCHAR, name VARCHAR, "
                "call_id VARCHAR, text VARCHAR, error VARCHAR, data VARCHAR, status VARCHAR, effect VARCHAR, "
                "effect_source VARCHAR, duration_ms DOUBLE, offset_ms BIGINT, tokens BIGINT)")
    con.executemany("INSERT INTO view_shown_steps VALUES (?, ?, ?, ?, NULL, ?, ?, ?, ?, ?, "
                    "CASE WHEN ? IS NOT NULL THEN 'registry' END, NULL, NULL, NULL)", [
        ("r1", 0, "user", None, "x" * CLIP, None, None, None, None, None),
        ("r1", 1, "tool_call", "lookup", "why\x1f", None, '{"a":1}', "ok", "read", "read"),
        ("r1", 2, "tool_result", None, None, "e" * (CLIP + 5), '{"r":2}', "error", None, None),
        ("r1", 3, "assistant", "", "", None, '{"d":3}', None, None, None),
        ("r1", 4, "tool_call", "s3cret", None, None, '{"k":"s3cret"}', None, None, None),
        # its text withheld, a tool result shows its payload instead, clipped as any other step's
        ("r1", 5, "tool_result", "lookup", "the s3cret", "f" * (CLIP + 2), '"' + "p" * (CLIP + 3) + '"', "error",
         None, None),
    ])
    con.execute("CREATE TEMP TABLE episodes AS SELECT 'r1' AS episode_id, 'bot' AS agent, "
                "NULL::VARCHAR AS agent_version, 'm' AS model, 'c' AS case_id, 'completed' AS termination, "
                "0.5::DOUBLE AS reward, 5 AS n_steps, 'hi' AS input, 's3cret' AS output, ? AS error",
                ["y" * (CLIP + 1)])
    con.execute("CREATE TEMP TABLE show_runs AS SELECT 'r1' AS episode_id")
    run_script(con, "view/report/runs_shown")
    run_script(con, "view/report/runs_heads", {"needles": []})
    run_script(con, "view/report/runs_read", {"needles": [], "clip": CLIP, "cap": 0})
    leak = Failure("c", "must_not_leak[0]", "must_not_leak", 'LEAKED "s3cret"', 4)
    whole = Failure("c", "tools_called[0]", "tools_called", None, None)
    elsewhere = Failure("c", "max_steps", "max_steps", "too long", 9)  # no such step: shown nowhere
    withheld = {("r1", 4): {"name": ("s3cret",), "data": ("s3cret",)}, ("r1", 5): {"text": ("s3cret",)},
                ("r1", None): {"output": ("s3cret",)}}
    held_steps = {("r1", 4): {"kind": "tool_call", "name": "s3cret", "text": None, "data": '{"k":"s3cret"}',
                              "error": None},
                  ("r1", 5): {"kind": "tool_result", "name": "lookup", "text": "the s3cret",
                              "data": '"' + "p" * (CLIP + 3) + '"', "error": "f" * (CLIP + 2)}}
    written = runs_json(con, withheld, held_steps, {"r1": (leak, whole, elsewhere)})
    assert '"why\\u001f"' in written  # a control character escaped as orjson escapes it
    data = json.loads(written)
    s = data["s"]

    def text(value):
        if isinstance(value, int):
            return s[value]
        if isinstance(value, list):
            return [text(v) for v in value]
        return {k: s[v] if k == "w" else v for k, v in value.items()} if isinstance(value, dict) else value

    run = data["runs"]["r1"]
    assert text(run["head"]) == [["agent", "bot"], ["version", None], ["model", "m"], ["case", "c"],
                                 ["termination", "completed"], ["reward", "0.5"], ["steps", "5"]]
    assert text(run["whole"]) == [["tools_called[0]", None]]
    assert text(run["tail"]) == [["output", [{"w": withheld_notice(["s3cret"], "output")}]],
                                 ["error", ["y" * CLIP, {"c": 1}]]]
    assert [[idx, *(text(v) for v in values), failures and text(failures)]
            for idx, *values, failures, _, _ in run["steps"]] == [
        [0, "user", None, None, None, ["x" * CLIP], 0],  # exactly CLIP characters: not clipped
        [1, "tool_call", "lookup", "ok", "read", ['{"a":1}', "why\x1f"], 0],  # a call: its args, then its text
        [2, "tool_result", None, "error", None, ['{"r":2}', {"e": 1}, "e" * CLIP, {"c": 5}], 0],
        [3, "assistant", "", None, None, [], 0],  # an empty text shows nothing (not the data)
        [4, "tool_call", withheld_notice(["s3cret"], "name"), None, None,
         [{"w": withheld_notice(["s3cret"], "data")}], [["must_not_leak[0]", 'LEAKED "s3cret"']]],
        [5, "tool_result", "lookup", "error", None,
         [{"w": withheld_notice(["s3cret"], "text")}, '"' + "p" * (CLIP - 1), {"c": 5}, {"e": 1}, "f" * CLIP, {"c": 2}],
         0],
    ]
    assert [(text(source), timing) for *_, source, timing in run["steps"]][:2] == [(None, 0), ("registry", 0)]
    assert sorted(s) == sorted(set(s))  # each text once


def test_view_never_imports_the_suite_compiler(sample_store):
    # the report reads a saved check: the suite compiler (a quarter second of imports) is not needed
    import subprocess
    import sys

    store, _ = sample_store
    code = ("import sys\nfrom tracelab.view import build_report\n"
            f"build_report({str(store)!r})\nprint(sorted(m for m in sys.modules if m.startswith('tracelab.suite')))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


@pytest.mark.parametrize(("needle", "text", "marked"), [
    ("S3cret", "the s3CRET is out", True),  # case aside
    ("s3cret", "nothing here", False),
    ("οδος", "ΟΔΟΣ", True),  # Python lowers a final Σ to ς, DuckDB to σ: marked all the same
    ("i̇stanbul", "İSTANBUL", True),  # Python lowers İ to i + a combining dot, DuckDB to i
    ("weiß", "WEISS", False),  # no lowering makes these equal
])
def test_steps_that_may_hold_a_leaked_string_are_looked_at(needle, text, marked):
    # sql/view/report/runs_read.sql narrows which steps Python reads field by field (show.fields_withheld): it
    # must never leave out one that Python's lowering finds the string in
    import duckdb

    from tracelab.sqlfiles import run_script
    from tracelab.view.runs import CLIP

    assert (needle.lower() in text.lower()) == marked
    con = duckdb.connect()
    con.execute("CREATE TEMP TABLE view_shown_steps AS SELECT 'r1' AS episode_id, 0 AS idx, 'assistant' AS kind, "
                "NULL::VARCHAR AS name, ? AS text, NULL::VARCHAR AS error, '{\"n\":1}' AS data, "
                "NULL::VARCHAR AS status, NULL::VARCHAR AS effect, NULL::VARCHAR AS effect_source, "
                "NULL::DOUBLE AS duration_ms, NULL::BIGINT AS offset_ms, NULL::BIGINT AS tokens", [text])
    con.execute("CREATE TEMP TABLE view_runs AS SELECT 'r1' AS episode_id, 0::BIGINT AS run")
    run_script(con, "view/report/runs_shown")
    run_script(con, "view/report/runs_read", {"needles": [needle], "clip": CLIP, "cap": 1000})
    found = con.execute("SELECT marked, text FROM view_steps").fetchall()
    assert found[0][0] or not marked
    assert found[0][1] == (text if found[0][0] else None)  # a marked step keeps its text whole for Python


def test_a_leak_only_the_transcript_search_locates_is_withheld(sample_store, monkeypatch):
    # a leak the stored text does not show as it is (an escape, a number written otherwise) is
    # located as must_not_leak searched (show.locate_leaks); the report withholds what it points at,
    # a step's field or the run's own, even where no field was marked as holding the string
    import tracelab.view.runs as runs
    from tracelab.view.show import withheld_notice

    store, _ = sample_store
    before = json.loads(build_report(store).runs.text)
    run = before["runs"]["bk-008"]
    text_before = [before["s"][p] for p in run["steps"][0][5] if isinstance(p, int)]
    assert text_before and run["tail"] and run["tail"][0][0] == before["s"].index("output")
    needle = "Jonas Weißmüller"

    def located(con, leaks):
        return {("bk-008", 0): {"text": {needle}}, ("bk-008", None): {"output": {needle}}}

    monkeypatch.setattr(runs, "locate_leaks", located)
    after = json.loads(build_report(store).runs.text)
    run = after["runs"]["bk-008"]
    s = after["s"]
    step = run["steps"][0]
    assert {"w": s.index(withheld_notice([needle], "text"))} in step[5]
    assert not any(isinstance(p, int) and s[p] in text_before for p in step[5])
    assert run["tail"][0] == [s.index("output"), [{"w": s.index(withheld_notice([needle], "output"))}]]


def test_counts_read_in_the_singular_where_there_is_one(sample_store, tmp_path):
    html = written(sample_store, tmp_path)
    assert "1/1 run passed" in html and "1/1 runs passed" not in html  # refund-golden-path: one run
    store, _ = sample_store
    code, out, _ = run_cli("view", "--store", str(store), "-o", str(tmp_path / "again.html"))
    assert code == 0 and re.search(r"\d+/\d+ cases passed, \d+ runs with their steps", out), out
