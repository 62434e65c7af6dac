"""The report in a real browser: Debian's Chromium, headless, loads `tracelab view`'s file from
disk, and the rendered DOM holds the cases, a failing run and its highlighted step.

`make test` installs Chromium when it is missing; without it this test fails (it never skips),
so CI cannot pass without having looked. Screenshots are written under the test's tmp dir
(their paths are printed: `pytest -s` shows them) for a person to look at.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.reliability.support import run_cli

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-extensions", "--hide-scrollbars")


def chromium() -> str:
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    pytest.fail("no Chromium to load the report: `apt-get install -y chromium` (`make test` does it)")


def browse(url: str, profile: Path, *args: str) -> str:
    result = subprocess.run([chromium(), *FLAGS, f"--user-data-dir={profile}", *args, url],
                            capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


@pytest.fixture(scope="module")
def report(sample_store, tmp_path_factory) -> Path:
    store, _ = sample_store
    out = tmp_path_factory.mktemp("report") / "tracelab-report.html"
    code, _, err = run_cli("view", "--store", str(store), "-o", str(out))
    assert (code, err) == (0, "")
    return out


def test_the_browser_renders_cases_a_failing_run_and_its_failing_step(report, tmp_path):
    dom = browse(f"{report.as_uri()}#run-bk-008", tmp_path / "profile", "--dump-dom")
    cases = re.findall(r'<details class="case (fail|ok)"[^>]*data-case="([^"]+)"', dom)
    assert len(cases) == 13 and cases[0][0] == "fail"
    view = dom[dom.index('<div id="run-view">'):]
    assert 'data-run="bk-008"' in view
    failed = re.findall(r'<tr class="failed" id="step-(\d+)">(.*?)</tr>', view, re.S)
    assert [idx for idx, _ in failed] == ["3"]
    assert 'failing steps: <a href="#step-3">3</a>' in view  # a long run's failing step is one click away
    row = failed[0][1]
    assert "must_not_leak[3]" in row and "withheld" in row
    assert "for good?" not in dom and "holder" not in dom  # the leaked fragment is nowhere
    assert "<body class=\"open-run\">" in dom  # the opened run is shown first


def test_screenshots_of_summary_run_and_matrix(report, tmp_path):
    shots = {"summary": "", "run": "#run-bk-008", "matrix": "#matrix"}
    for name, anchor in shots.items():
        png = tmp_path / f"report-{name}.png"
        browse(f"{report.as_uri()}{anchor}", tmp_path / f"profile-{name}", f"--screenshot={png}",
               "--window-size=1400,1000")
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000
        print(f"screenshot: {png}")
