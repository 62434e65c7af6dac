"""The hand-written sample traces: valid by trace-format §5, and covering what the README says."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.native_rules import calls, leak_places, parse_line, violations
from tracelab.store import open_store

NATIVE = Path(__file__).resolve().parents[1] / "sample_traces" / "native"
THEMED = {"shifts.jsonl": 8, "banking.jsonl": 10, "support.jsonl": 10, "edge_cases.jsonl": 5}
BAD_LINES = NATIVE / "bad_lines.jsonl"
# bad_lines.jsonl, line by line: valid episodes, a blank line, and one broken record per rule
BAD_LINES_EXPECTED = {
    1: [],
    2: ["invalid JSON"],
    3: ["not a JSON object"],
    4: ["episode_id is not a non-empty string"],
    6: [],
    7: ["steps is not an array"],
    8: ["steps[0]: no kind"],
    9: ["steps[1]: unknown kind 'thought'"],
    10: ["reward is not a number"],
    11: [],
}
BROKEN_LINES = [n for n, found in BAD_LINES_EXPECTED.items() if found]


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def episodes() -> dict[str, dict[str, Any]]:
    """Every valid sample episode by id (themed files, then the valid lines of bad_lines)."""
    found = [ep for name in THEMED for ep in _read(NATIVE / name)]
    for line in BAD_LINES.read_text(encoding="utf-8").split("\n"):
        record, problems = parse_line(line) if line.strip() else (None, ["blank"])
        if not problems:
            found.append(record)
    ids = [ep["episode_id"] for ep in found]
    assert len(ids) == len(set(ids)), "episode ids must be unique across sample files"
    return {ep["episode_id"]: ep for ep in found}


@pytest.mark.parametrize("name", sorted(THEMED))
def test_themed_files_hold_only_valid_episodes(name: str) -> None:
    records = _read(NATIVE / name)
    assert len(records) == THEMED[name]
    assert {r["episode_id"]: violations(r) for r in records} == {r["episode_id"]: [] for r in records}
    assert {r["format"] for r in records} == {"tracelab.episode/v1"}


def test_bad_lines_breaks_exactly_the_documented_lines() -> None:
    lines = BAD_LINES.read_text(encoding="utf-8").split("\n")
    assert lines[-1] == ""  # the file ends with a newline
    found = {n: parse_line(line)[1] for n, line in enumerate(lines[:-1], start=1) if line.strip()}
    assert found == BAD_LINES_EXPECTED
    assert lines[4] == ""  # line 5 is blank: skipped, yet counted in line numbers
    assert len(BROKEN_LINES) == 7


def test_every_case_id_is_shared_by_two_to_four_runs(episodes: dict[str, dict[str, Any]]) -> None:
    per_case = Counter(ep["case_id"] for ep in episodes.values())
    assert per_case == {
        "roster-other-org": 3, "assign-shift": 3, "swap-shift": 3,
        "transfer-money": 4, "refund-request": 3, "delete-account": 3,
        "kb-search": 4, "password-reset": 3, "order-status": 4,
        "restart-service": 3, "log-triage": 3,
    }
    assert len(episodes) == 36


def test_runs_vary_agent_version_model_and_tags(episodes: dict[str, dict[str, Any]]) -> None:
    assert {ep["agent"] for ep in episodes.values()} == {
        "shift-assistant", "bank-agent", "support-bot", "ops-copilot",
    }
    versions = {(ep["agent"], ep["agent_version"]) for ep in episodes.values()}
    assert len(versions) == 9
    assert len({ep["model"] for ep in episodes.values()}) == 8
    assert {t for ep in episodes.values() for t in ep["tags"]} >= {"prod", "canary", "staging", "tr"}


# (secret, the one episode that carries it, the one place it is in)
LEAKS = [
    ("Petra Lindqvist", "sh-002", {"tool_result.data"}),
    ("sk-live-7Hq2Xv9Lm4Rt", "ed-005", {"tool_result.data"}),
    ("DE89 3704 0044 0532 0130 00", "bk-003", {"tool_call.data"}),
    ("sk-live-Q81zPw3Kd0Ns", "bk-006", {"tool_result.error"}),
    ("Jonas Weißmüller", "bk-008", {"confirmation.data"}),
    ("ACCT-55120871", "bk-008", {"confirmation.data", "confirmation.text"}),
    ("sk-live-Ret4Mv0Yx2Bc", "sp-003", {"retrieval.data"}),
    ("Ilse Brandvold", "sp-006", {"output", "assistant.text"}),
    ("ACCT-77031942", "sp-006", {"output", "assistant.text"}),
]


@pytest.mark.parametrize(("secret", "episode_id", "places"), LEAKS)
def test_each_secret_is_planted_in_one_episode_and_place(
    episodes: dict[str, dict[str, Any]], secret: str, episode_id: str, places: set[str]
) -> None:
    carriers = {eid: found for eid, ep in episodes.items() if (found := leak_places(ep, secret))}
    assert carriers == {episode_id: places}


def test_the_api_key_prefix_occurs_only_in_the_three_key_leaks(
    episodes: dict[str, dict[str, Any]],
) -> None:
    assert {eid for eid, ep in episodes.items() if leak_places(ep, "SK-LIVE-")} == {
        "bk-006", "sp-003", "ed-005",
    }


def _statuses(ep: dict[str, Any]) -> list[tuple[str | None, str, str | None]]:
    return [(c.tool_name, c.status, c.effect) for c in calls(ep)]


def test_write_outcomes(episodes: dict[str, dict[str, Any]]) -> None:
    assert ("transfer_money", "ok", "write") in _statuses(episodes["bk-001"])  # executed
    assert _statuses(episodes["sh-007"]) == [("swap_shifts", "denied", "write")]
    assert _statuses(episodes["sh-006"]) == [("assign_shift", "error", "write")]
    assert _statuses(episodes["bk-003"]) == [("transfer_money", "denied", "write")]
    # close_account's definition records no effect: the step's own effect makes it a write
    assert _statuses(episodes["bk-010"]) == [("close_account", "ok", "write")]
    assert next(t for t in episodes["bk-010"]["tools"] if t["name"] == "close_account").get(
        "effect") is None


def test_confirmations(episodes: dict[str, dict[str, Any]]) -> None:
    raised = {eid: [s["name"] for s in ep["steps"] if s["kind"] == "confirmation"]
              for eid, ep in episodes.items()}
    assert {eid: names for eid, names in raised.items() if names} == {
        "sh-005": ["assign_shift"], "bk-002": ["transfer_money"], "bk-008": ["close_account"],
        "bk-009": ["close_account"], "ed-002": ["restart_service"],
    }
    assert isinstance(episodes["bk-002"]["steps"][1]["args"], str)  # args recorded as JSON text


def test_tool_availability_kinds(episodes: dict[str, dict[str, Any]]) -> None:
    unknown = {eid for eid, ep in episodes.items() if ep.get("tools") is None}
    empty = {eid for eid, ep in episodes.items() if ep.get("tools") == []}
    assert unknown == {"sh-003", "sp-004", "bl-002"}
    assert "tools" not in episodes["sh-003"] and episodes["sp-004"]["tools"] is None
    assert empty == {"sh-008", "ed-003"}
    assert _statuses(episodes["ed-003"]) == [("restart_service", "error", None)]  # offered nothing
    assert len(episodes) - len(unknown) - len(empty) == 31


def test_budget_and_max_steps(episodes: dict[str, dict[str, Any]]) -> None:
    budgets = [s for s in episodes["bk-004"]["steps"] if s["kind"] == "budget"]
    assert [b["steps_used"] for b in budgets] == [4, 8, 12]
    assert episodes["bk-004"]["termination"] == "max_steps"
    assert "output" in episodes["bk-004"] and episodes["bk-004"]["output"] is None
    assert episodes["sh-001"]["steps"][4] == {"kind": "budget", "steps_used": 2, "tokens_used": 812}


def _retrievals(ep: dict[str, Any]) -> list[dict[str, Any]]:
    return [s["data"] for s in ep["steps"] if s["kind"] == "retrieval"]


def test_retrieval_steps(episodes: dict[str, dict[str, Any]]) -> None:
    good, = _retrievals(episodes["sp-001"])
    assert [c["id"] for c in good["candidates"] if c.get("superseded_by") is not None] == ["kb-12"]
    assert good["returned"] == ["kb-31", "kb-07"]
    assert good["omitted"] == 1 and good["budget_bytes"] == 1200
    stale, = _retrievals(episodes["sp-002"])  # returns the superseded kb-12, reports no omissions
    assert "kb-12" in stale["returned"] and "omitted" not in stale
    over, = _retrievals(episodes["sp-003"])  # returned content exceeds the byte budget
    returned = [c for c in over["candidates"] if c["id"] in over["returned"]]
    assert sum(len(c["content"].encode()) for c in returned) > over["budget_bytes"] == 160


def test_parallel_calls_and_a_call_without_result(episodes: dict[str, dict[str, Any]]) -> None:
    kinds = [s["kind"] for s in episodes["sp-008"]["steps"]]
    assert kinds[1:5] == ["tool_call", "tool_call", "tool_result", "tool_result"]
    assert [(c.call_id, c.result_step_idx) for c in calls(episodes["sp-008"])] == [
        ("toolu_A", 4), ("toolu_B", 3),
    ]
    assert [(c.call_id, c.status) for c in calls(episodes["ed-004"])] == [
        ("c1", "ok"), ("c2", "ok"), ("c3", "missing"),
    ]
    assert _statuses(episodes["bk-007"]) == [("issue_refund", "missing", "write")]


def test_reused_and_empty_call_ids(episodes: dict[str, dict[str, Any]]) -> None:
    reused = calls(episodes["sp-009"])
    assert [(c.call_id, c.tool_name, c.result_step_idx) for c in reused] == [
        ("call_0", "get_order", 2), ("call_0", "create_ticket", 4),
    ]
    empty = calls(episodes["sp-007"])
    assert [(c.call_id, c.tool_name, c.status) for c in empty] == [
        ("", "reset_password", "denied"), ("", "create_ticket", "ok"),
    ]


def test_unicode_and_zero_steps(episodes: dict[str, dict[str, Any]]) -> None:
    text = episodes["sh-007"]["input"]
    assert "İ" in text and "Σ" in text and "🙏" in text
    assert "İZMİR" in episodes["ed-002"]["input"] and "🚨" in episodes["ed-002"]["input"]
    assert [eid for eid, ep in episodes.items() if ep["steps"] == []] == ["sp-010"]


def test_effects_on_steps(episodes: dict[str, dict[str, Any]]) -> None:
    with_effect = {eid for eid, ep in episodes.items()
                   if any("effect" in s for s in ep["steps"] if s["kind"] == "tool_call")}
    assert with_effect == {"sh-004", "bk-010", "ed-004"}


def test_ingest_loads_the_samples_and_quarantines_each_broken_line(tmp_path: Path) -> None:
    with open_store(tmp_path / "s.duckdb") as store:
        report = store.ingest([NATIVE])
        assert (report.added, report.skipped, report.quarantined) == (36, 0, len(BROKEN_LINES))
        quarantined = store.sql("SELECT source_uri, line FROM quarantine ORDER BY line")
        assert quarantined["line"].to_list() == BROKEN_LINES
        assert set(quarantined["source_uri"]) == {str(BAD_LINES)}
        undeclared = store.sql("SELECT episode_id FROM episodes WHERE NOT tools_declared "
                               "ORDER BY episode_id")["episode_id"].to_list()
        assert undeclared == ["bl-002", "sh-003", "sp-004"]
        leaking = store.sql("SELECT DISTINCT episode_id FROM transcript "
                            "WHERE contains(lower(text), 'sk-live-') ORDER BY 1")
        assert leaking["episode_id"].to_list() == ["bk-006", "ed-005", "sp-003"]


def test_ingested_tool_calls_match_the_pairing_rule(
    tmp_path: Path, episodes: dict[str, dict[str, Any]]
) -> None:
    with open_store(tmp_path / "s.duckdb") as store:
        store.ingest([NATIVE])
        rows = store.sql("SELECT episode_id, call_index, call_step_idx, result_step_idx, status, "
                         "effect FROM tool_calls ORDER BY episode_id, call_index").rows()
    expected = sorted(
        (eid, c.call_index, c.call_step_idx, c.result_step_idx, c.status, c.effect)
        for eid, ep in episodes.items() for c in calls(ep)
    )
    assert rows == expected


def _consecutive_calls(ep: dict[str, Any]) -> bool:
    kinds = [s["kind"] for s in ep["steps"]]
    return any(a == b == "tool_call" for a, b in zip(kinds, kinds[1:], strict=False))


COVERAGE = {  # the "Coverage at a glance" table of sample_traces/README.md
    "executed write": (
        lambda ep: any(c.effect == "write" and c.status == "ok" for c in calls(ep)),
        {"sh-004", "bk-001", "bk-005", "bk-010", "sp-005", "sp-007", "sp-009", "ed-001", "bl-003"},
    ),
    "denied call": (
        lambda ep: any(c.status == "denied" for c in calls(ep)),
        {"sh-001", "sh-007", "bk-003", "sp-007"},
    ),
    "failed write": (
        lambda ep: any(c.effect == "write" and c.status == "error" for c in calls(ep)),
        {"sh-006", "bk-006"},
    ),
    "budget steps": (
        lambda ep: any(s["kind"] == "budget" for s in ep["steps"]),
        {"sh-001", "sh-002", "sh-004", "sh-005", "bk-001", "bk-002", "bk-004", "bk-005", "bk-009",
         "ed-001"},
    ),
    "superseded candidate": (
        lambda ep: any(c.get("superseded_by") is not None
                       for d in _retrievals(ep) for c in d["candidates"]),
        {"sp-001", "sp-002", "sp-004"},
    ),
    "omitted": (lambda ep: any("omitted" in d for d in _retrievals(ep)),
                {"sp-001", "sp-003", "sp-004"}),
    "budget_bytes": (lambda ep: any("budget_bytes" in d for d in _retrievals(ep)),
                     {"sp-001", "sp-003"}),
    "not completed": (lambda ep: ep["termination"] != "completed", {"bk-004", "bk-007", "sp-010"}),
    "parallel calls": (_consecutive_calls, {"sp-008", "ed-004"}),
    "call without a result": (
        lambda ep: any(c.status == "missing" for c in calls(ep)), {"bk-007", "ed-004"},
    ),
}


@pytest.mark.parametrize("feature", sorted(COVERAGE))
def test_coverage_table(episodes: dict[str, dict[str, Any]], feature: str) -> None:
    test, expected = COVERAGE[feature]
    assert {eid for eid, ep in episodes.items() if test(ep)} == expected
