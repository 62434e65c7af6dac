"""`tracelab view`: one self-contained HTML file of a saved check (cli-and-results "`tracelab view`")."""
from __future__ import annotations

import json
import re

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
    assert 'title="assign-shift × no-unassigning: exercised in 0 of 3 runs (no 3, unknown 0); failed 0">0%' in matrix


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
    assert code == 2 and "cannot write the report" in err and "Traceback" not in err
