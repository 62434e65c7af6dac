"""The columns of a verdict row, and which rows a check keeps one by one; no Polars here, so that
`tracelab view` and `show` read them without importing it."""
from __future__ import annotations

RESULT_COLUMNS = ("case_id", "assertion_id", "assertion_type", "episode_id", "passed", "exercised",
                  "reason", "step_idx")
"""The columns of a verdict row (`check_results` holds them after its run_id)."""

NOT_PLAIN_PASS = "NOT is_plain_pass(passed, exercised, reason)"
"""SQL over verdict rows: the row is not a plain pass (macro is_plain_pass of
sql/store/views/rules.sql). A plain pass follows from the runs a case selected, so a check keeps
only the other rows one by one (`CheckResult.notable`, the store's `check_exceptions`)."""

__all__ = ["NOT_PLAIN_PASS", "RESULT_COLUMNS"]
