"""A suite's `where` runs without external access, and functions that reach outside the run are
refused at load (issue 14, item 3).
"""
from __future__ import annotations

import json

import pytest

from tests.conftest import episode
from tests.reliability.support import one_line_error, run_cli, suite_file


@pytest.mark.parametrize("call", ["current_setting('home_directory') = ''", "sleep_ms(100000) IS NULL",
                                  "write_log('x') IS NULL", "nextval('s') > 0", "setseed(0.5) IS NULL"])
def test_where_functions_that_reach_outside_the_run_are_refused(tmp_path, call):
    suite = suite_file(tmp_path, "- {type: output_contains, value: ok}", select=json.dumps({"where": call}))
    code, out, err = run_cli("lint", str(suite))
    assert (code, out) == (2, "") and one_line_error(err), err
    assert "is not allowed in a where" in err


def test_where_runs_in_a_sandbox_without_external_access(store, write_jsonl):
    """The selection runs on a connection of its own: external access off, configuration locked,
    whatever the store's connection allows (a function the load-time list missed reads nothing)."""
    from tracelab.suite.where import where_flags

    store.ingest([write_jsonl([episode("r1", {"kind": "user", "text": "hi"})])])
    store.con.execute("CREATE TEMP TABLE chk_matched AS SELECT 'c' AS case_id, 1 AS where_idx, 'r1' AS episode_id")
    probes = [("c", "current_setting('enable_external_access') = false"),
              ("c", "current_setting('lock_configuration') = true"),
              ("c", "current_setting('TimeZone') = 'UTC'")]
    flags = where_flags(store.con, probes, lambda case: case)
    assert flags.rows() == [("r1", [True, True, True])]
    assert store.con.execute("SELECT current_setting('enable_external_access')").fetchone() == (True,)


