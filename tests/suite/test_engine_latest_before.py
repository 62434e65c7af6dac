"""The sequence rule latest_before (docs/suites.md §4, §9): verdicts, exercised, location, lint, cover."""
from __future__ import annotations

from typing import Any

import pytest

from tests.suite.engine_support import Checker, call, calls, ep, verdicts
from tracelab.results import cover
from tracelab.suite import lint_suite, load_suite

TEST = r"\b(pytest|npm test)\b"
PUSH = r"git\s+push"
RULE = ("{type: latest_before, then: {tool: Bash, args_match: {command: '" + PUSH + "'}}, "
        "latest: {tool: Bash, args_match: {command: '" + TEST + "'}}")


@pytest.fixture
def checker(store, tmp_path) -> Checker:
    return Checker(store, tmp_path)


def bash(command: str, status: str | None = "ok") -> list[dict[str, Any]]:
    return call("Bash", {"command": command}, status=status, call_id=f"{command}-{status}")


def edit() -> list[dict[str, Any]]:
    return call("Edit", {"file_path": "src/app.py"})


def session(name: str, *specs: list[dict[str, Any]]) -> dict[str, Any]:
    return ep(name, *calls(*specs))


def check(checker: Checker, extra: str = ""):
    rule = RULE + (", " + extra if extra else "") + "}"
    return checker.check(f"- id: c\n  assertions:\n    - {{type: sequence_valid, id: r, "
                         f"rules: [{rule}]}}\n")


PUSH_LABEL = '"Bash" (command~"git\\\\s+push")'
TEST_LABEL = '"Bash" (command~"\\\\b(pytest|npm test)\\\\b")'


def test_red_fix_green_push_passes_and_green_red_push_fails_at_the_push(checker):
    checker.ingest(
        session("red-fix-green-push", bash("pytest", "error"), edit(), bash("pytest"),
                bash("git push")),
        session("green-red-push", bash("pytest"), edit(), bash("pytest", "error"),
                bash("git push")))
    result = check(checker)
    assert verdicts(result, "r") == {
        "red-fix-green-push": (True, "yes", None),
        "green-red-push": (False, "yes",
                           f"rules[0] (latest_before): {PUSH_LABEL} at call_index 3: the latest "
                           f"earlier {TEST_LABEL} call (call_index 2) has status error, not ok"),
    }
    steps = {r["episode_id"]: r["step_idx"] for r in result.verdicts.iter_rows(named=True)
             if r["assertion_id"] == "r"}
    # each call is a tool_call and a tool_result step: the push (call 3) is step 6
    assert steps == {"red-fix-green-push": None, "green-red-push": 6}


def test_it_is_not_exercised_without_a_then_call_or_without_an_earlier_latest_call(checker):
    checker.ingest(session("no-push", bash("pytest", "error"), edit()),
                   session("push-untested", edit(), bash("git push"), bash("pytest")))
    assert verdicts(check(checker), "r") == {
        "no-push": (True, "no", f"rules[0] (latest_before): no call matches {PUSH_LABEL}"),
        "push-untested": (True, "no", f"rules[0] (latest_before): no {PUSH_LABEL} call has an "
                                      f"earlier {TEST_LABEL} call"),
    }


def test_required_fails_a_then_call_without_an_earlier_latest_call(checker):
    checker.ingest(session("push-untested", edit(), bash("git push")),
                   session("tested", bash("pytest"), bash("git push"), bash("git push")))
    result = check(checker, "required: true")
    assert verdicts(result, "r") == {
        "push-untested": (False, "yes", f"rules[0] (latest_before): {PUSH_LABEL} at call_index 1 "
                                        f"has no earlier {TEST_LABEL} call"),
        "tested": (True, "yes", None),
    }
    assert {r["episode_id"]: r["step_idx"] for r in result.verdicts.iter_rows(named=True)
            if r["assertion_id"] == "r"} == {"push-untested": 2, "tested": None}


def test_a_call_whose_result_never_came_is_missing(checker):
    checker.ingest(session("interrupted", bash("pytest", None), bash("git push")))
    assert verdicts(check(checker), "r")["interrupted"][0] is False
    assert "has status missing, not ok" in verdicts(check(checker), "r")["interrupted"][2]
    assert verdicts(check(checker, "status: [ok, missing]"), "r") == {
        "interrupted": (True, "yes", None)}


def test_the_status_list_and_the_matchers_own_status_filter(checker):
    checker.ingest(session("green-red-push", bash("pytest"), bash("pytest", "error"),
                           bash("git push")))
    assert verdicts(check(checker, "status: [ok, error]"), "r")["green-red-push"][0] is True
    # `latest` is the whole matcher: with its own status filter only passing runs are candidates
    rule = (RULE.replace("'" + TEST + "'}", "'" + TEST + "'}, status: [ok]") + "}")
    result = checker.check(f"- id: c\n  assertions:\n    - {{type: sequence_valid, id: r, "
                           f"rules: [{rule}]}}\n")
    assert verdicts(result, "r")["green-red-push"][:2] == (True, "yes")


def test_only_the_first_breaking_then_call_is_the_location(checker):
    checker.ingest(session("two-bad-pushes", bash("pytest", "error"), bash("git push"),
                           bash("pytest"), bash("git push"), bash("npm test", "denied"),
                           bash("git push")))
    result = check(checker)
    assert verdicts(result, "r")["two-bad-pushes"][0] is False
    rows = result.verdicts.filter(result.verdicts["assertion_id"] == "r")
    assert rows["step_idx"].to_list() == [2]


def write_suite(tmp_path, rule: str):
    path = tmp_path / "s.yaml"
    path.write_text("suite: s\nmin_cases: 1\ndefaults: {must_not_leak: [x]}\ncases:\n"
                    f"  - id: c\n    assertions:\n      - {{type: sequence_valid, id: r, "
                    f"rules: [{rule}]}}\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(("rule", "expected"), [
    ("{type: latest_before, then: push, latest: test, status: [ok, error, denied, missing]}",
     [("ineffective", "r", "rules[0] (latest_before): status lists every status and required "
                           "is false: no `then` call can break it")]),
    ("{type: latest_before, then: push, latest: test, status: [ok, error, denied, missing], "
     "required: true}", []),
    ("{type: latest_before, then: '', latest: test}",
     [("ineffective", "r", "an empty tool name (rules[0].then)")]),
])
def test_the_static_sweep(tmp_path, rule, expected):
    found = lint_suite(load_suite(write_suite(tmp_path, rule)))
    assert [(f.kind, f.assertion, f.reason) for f in found] == expected


def test_an_empty_status_list_is_refused(tmp_path):
    from tracelab.errors import SuiteError
    with pytest.raises(SuiteError, match="an empty status list matches no call"):
        load_suite(write_suite(tmp_path, "{type: latest_before, then: a, latest: b, status: []}"))


def test_cover_counts_the_runs_it_exercised(checker):
    checker.ingest(session("green-push", bash("pytest"), bash("git push")),
                   session("no-push", bash("pytest")))
    path = checker.suite_path(f"- id: c\n  assertions:\n    - {{type: sequence_valid, id: r, "
                              f"rules: [{RULE}}}]}}\n")
    table = cover.cover(checker.store, path).table
    row = table.filter(table["assertion_id"] == "r").row(0, named=True)
    assert (row["runs"], row["exercised_yes"], row["exercised_no"]) == (2, 1, 1)
    assert row["not_exercised_reasons"] == [
        {"reason": f"rules[0] (latest_before): no call matches {PUSH_LABEL}", "runs": 1}]


def test_it_stays_near_linear_in_the_calls_of_a_run(checker):
    """One long run: each push's latest earlier test run comes from one ASOF join, not a
    comparison of every pair of calls (5x the calls must take well under 25x the time)."""
    import time

    def long_run(name: str, n: int) -> dict[str, Any]:
        names = ["pytest" if i % 3 == 0 else "git push" if i % 3 == 2 else "edit" for i in range(n)]
        red = 3 * (n // 3 - 1)  # the last test run fails; a push follows it
        return session(name, *(bash(f"{command} {i}", "error" if i == red else "ok")
                               for i, command in enumerate(names)))

    seconds = {}
    for n in (4_000, 20_000):
        checker.ingest(long_run(f"long-{n}", n))
        start = time.perf_counter()
        result = checker.check(f"- id: c\n  select: {{where: \"episode_id = 'long-{n}'\"}}\n"
                               f"  assertions:\n    - {{type: sequence_valid, id: r, rules: "
                               f"[{{type: latest_before, then: {{tool: Bash, args_match: "
                               f"{{command: push}}}}, latest: {{tool: Bash, args_match: "
                               f"{{command: pytest}}}}}}]}}\n")
        seconds[n] = time.perf_counter() - start
        assert verdicts(result, "r")[f"long-{n}"][0] is False
    assert seconds[20_000] < 10 * seconds[4_000], seconds
