"""The shipped coding-agent suite gives the result the README states (issue 25, acceptance 3),
and the README's "Checking coding-agent sessions" answers its question the same two ways."""
from __future__ import annotations

import re
import subprocess

import polars as pl

from tests.conftest import REPO
from tests.test_readme import README, blocks, readme_env, shell_commands
from tracelab.results.check import check
from tracelab.store import open_store

SUITE = REPO / "sample_traces" / "coding_agent.yaml"
RELEASE = {"0199c0de-5e55-7000-8000-00000000a002", "0199c0de-5e55-7000-8000-00000000b002"}


def section(title: str) -> str:
    return README.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_after_the_tour_the_suite_gives_the_readme_result(tmp_path):
    """The tour ingests sample_traces/ and imports the effects: the file tools then write, and
    the edits are `writes_allowed`; only the release session fails, in four cases."""
    assert "exit 1: the release session fails four cases" in README
    with open_store(tmp_path / "tour.duckdb") as store:
        store.ingest([REPO / "sample_traces"])
        store.effects.load(REPO / "sample_traces" / "effects.yaml")
        run = check(store, SUITE, save=False)
    verdicts = run.verdicts
    failed = verdicts.filter(~pl.col("passed"))
    assert set(failed["episode_id"]) == RELEASE
    assert failed.filter(pl.col("assertion_id") == "undeclared_writes").height == 0
    per_case = {case.id: case.passed for case in run.result.cases}
    assert per_case == {"no-destructive-shell": True, "no-write-outside-workspace": False,
                        "no-push-after-failing-tests": False, "no-push-to-main": False,
                        "secrets-stay-off-the-terminal": False}
    for episode in RELEASE:
        cases = set(failed.filter(pl.col("episode_id") == episode)["case_id"])
        assert len(cases) == 4, episode
    # the red -> fix -> green session is judged by latest_before, not by never_after
    push = verdicts.filter(pl.col("assertion_id") == "push-only-after-green-tests")
    assert set(push.filter(~pl.col("passed"))["episode_id"]) == RELEASE
    assert all("(latest_before)" in reason for reason in push.filter(~pl.col("passed"))["reason"])


def test_the_coding_agent_section_answers_its_question_the_same_two_ways(tmp_path):
    text = section("Checking coding-agent sessions")
    assert "~/.claude/projects" in text and "~/.codex/sessions" in text
    commands = shell_commands(text)
    assert commands[0].startswith("tracelab ingest ~/.claude/projects ~/.codex/sessions")
    assert all(c in shell_commands() for c in commands)  # test_readme runs them in order too
    (tmp_path / "sample_traces").symlink_to(REPO / "sample_traces")
    env = readme_env(tmp_path)
    outputs = []
    for command in commands:
        result = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env,
                                capture_output=True, text=True, timeout=300)
        assert result.returncode in (0, 1), (command, result.stderr)
        outputs.append(result.stdout)
    sql, suite = outputs[-2], outputs[-1]
    by_sql = set(re.findall(r"^ (\S+)\s+(\d+)\s+error", sql, re.M))
    by_suite = set(re.findall(r"^\s+(\S+) step (\d+)\s+push-only-after-green-tests", suite, re.M))
    assert by_sql == by_suite == {(episode, step) for episode, step in
                                  zip(sorted(RELEASE), ("13", "15"), strict=True)}
    assert len(blocks("sh", text)) == 3
