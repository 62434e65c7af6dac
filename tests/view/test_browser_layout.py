"""The report's layout measured in a real browser (Debian's Chromium, headless, as
tests/view/test_browser.py): an anchor lands below the sticky tabs, a long tool name wraps inside
its column, and at 800 px the run's text column keeps at least a third of the table."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import episode
from tests.reliability.support import run_cli
from tests.view.test_browser import browse

LONG_TOOL = "get_most_recent_transactions_of_the_account_holder_including_scheduled_ones"

# measures the opened page once the report's script has run, into the DOM that --dump-dom prints
MEASURE = """<script>
(function () {
  var out = {};
  var nav = document.querySelector("nav.tabs").getBoundingClientRect();
  var target = document.getElementById(decodeURIComponent(location.hash.slice(1)));
  if (target && !/^run-/.test(location.hash.slice(1))) out.anchor = [target.getBoundingClientRect().top, nav.bottom];
  var table = document.querySelector(".timeline");
  if (table) {
    out.table = table.getBoundingClientRect().width;
    out.text = document.querySelector(".timeline td.content").getBoundingClientRect().width;
    var tool = Array.prototype.filter.call(document.querySelectorAll(".timeline td.id"),
                                           function (td) { return td.textContent.length > 40; })[0];
    out.tool = [tool.scrollWidth, tool.clientWidth];
  }
  var pre = document.createElement("pre");
  pre.id = "measured";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script></body>"""


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    """A report of many failing runs (a page long enough to scroll), one with a long tool name, with the
    measuring script appended."""
    folder = tmp_path_factory.mktemp("layout")
    steps = [{"kind": "user", "text": "Pay my rent, please. " * 20},
             {"kind": "tool_call", "name": LONG_TOOL, "call_id": "c0", "args": {"n": 100}},
             {"kind": "tool_result", "call_id": "c0", "text": "rent: 900 EUR to DE00 1234 " * 30},
             {"kind": "tool_call", "name": "send_money", "call_id": "c1", "args": {"to": "attacker"}},
             {"kind": "tool_result", "call_id": "c1", "text": "sent"}]
    runs = [episode(f"run-{case}-{n}", *steps, case_id=f"case-{case}", model="m")
            for case in range(12) for n in range(6)]
    (folder / "runs.jsonl").write_text("\n".join(json.dumps(r) for r in runs) + "\n", encoding="utf-8")
    cases = "".join(f"  - id: case-{case}\n    expect:\n      must_not_write: [send_money]\n" for case in range(12))
    (folder / "suite.yaml").write_text("suite: layout\nmin_cases: 1\ndefaults:\n  must_not_leak: [\"sk-live-\"]\n"
                                       f"cases:\n{cases}", encoding="utf-8")
    store = str(folder / "layout.duckdb")
    assert run_cli("ingest", "--store", store, "-q", str(folder / "runs.jsonl"))[0] == 0
    assert run_cli("effects", "set", "--store", store, "send_money=write")[0] == 0
    assert run_cli("check", str(folder / "suite.yaml"), "--store", store)[0] == 1
    out = folder / "report.html"
    assert run_cli("view", "--store", store, "-o", str(out))[0] == 0
    out.write_text(out.read_text(encoding="utf-8").replace("</body>", MEASURE), encoding="utf-8")
    return out


def measured(report: Path, anchor: str, width: int, profile: Path) -> dict:
    dom = browse(f"{report.as_uri()}#{anchor}", profile, "--dump-dom", f"--window-size={width},900")
    return json.loads(re.search(r'<pre id="measured">(.*?)</pre>', dom, re.S).group(1).replace("&quot;", '"'))


@pytest.mark.parametrize("width", [1400, 800])
def test_an_anchor_lands_below_the_sticky_tabs(report, tmp_path, width):
    top, bar = measured(report, "c9", width, tmp_path / "profile")["anchor"]
    assert top >= bar - 1  # the case's title is not under the bar


@pytest.mark.parametrize("width", [1400, 800])
def test_the_run_table_stays_readable(report, tmp_path, width):
    found = measured(report, "run-run-3-0", width, tmp_path / "profile")
    assert found["text"] >= found["table"] / 3  # the text column keeps a third of the table
    scroll, client = found["tool"]
    assert scroll <= client + 1  # a long tool name wraps inside its column, never runs under the next
