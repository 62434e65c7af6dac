"""`tracelab ingest` says what happened (issue 26): --agent/--model/--tag fill what a source
does not record; a Claude Code sub-agent or continuation file is merged into its session, not
"already ingested"; -q prints errors and the summary only; counts agree with their nouns; `info`
says how many agents it left out."""
from __future__ import annotations

import shutil

from click.testing import CliRunner

from tests.conftest import REPO, episode
from tracelab.cli import cli
from tracelab.store import open_store

SESSION = REPO / "sample_traces" / "claude-code" / "-home-dev-shop"


def run(*args: str):
    return CliRunner().invoke(cli, list(args))


def test_agent_model_and_tags_fill_what_the_source_lacks(tmp_path, write_jsonl):
    path = write_jsonl([episode("bare"), episode("named", agent="bank-bot", model="gpt-4o", tags=["prod"])])
    store = str(tmp_path / "s.duckdb")

    result = run("ingest", "-q", str(path), "--store", store, "--agent", "tau-airline", "--model", "gpt-4o-2024-08-06",
                 "--tag", "airline", "--tag", "prod")

    assert result.exit_code == 0, result.output
    with open_store(store, read_only=True) as opened:
        rows = opened.sql("SELECT episode_id, agent, model, tags FROM episodes ORDER BY episode_id").rows()
    assert rows == [("bare", "tau-airline", "gpt-4o-2024-08-06", ["airline", "prod"]),
                    ("named", "bank-bot", "gpt-4o", ["prod", "airline"])]


def test_fill_leaves_stored_episodes_and_other_commands_alone(tmp_path, write_jsonl):
    store = str(tmp_path / "s.duckdb")
    assert run("ingest", "-q", str(write_jsonl([episode("a")], "a.jsonl")), "--store", store).exit_code == 0
    run("ingest", "-q", str(write_jsonl([episode("a"), episode("b")], "b.jsonl")), "--store", store, "--model", "m")
    with open_store(store, read_only=True) as opened:
        assert opened.sql("SELECT episode_id, model FROM episodes ORDER BY 1").rows() == [("a", None), ("b", "m")]


def test_empty_fill_value_and_spark_engine_are_refused(tmp_path, write_jsonl):
    path = str(write_jsonl([episode("a")]))
    empty = run("ingest", path, "--store", str(tmp_path / "s.duckdb"), "--tag", " ")
    assert empty.exit_code == 2 and "--tag needs a non-empty value" in empty.output
    spark = run("ingest", path, "--store", str(tmp_path / "p"), "--engine", "spark", "--model", "m")
    assert spark.exit_code == 2
    assert "--agent, --model and --tag apply to --engine duckdb only" in spark.output


def test_a_sub_agent_or_continuation_file_is_merged_not_already_ingested(tmp_path):
    folder = tmp_path / "-home-dev-shop"
    shutil.copytree(SESSION, folder)
    store = str(tmp_path / "s.duckdb")

    first = run("ingest", str(folder), "--store", store)

    assert first.exit_code == 0, first.output
    assert first.stdout == ("2 episodes added, 0 skipped (already ingested), 2 merged into an earlier session, "
                            "0 quarantined — 4 files (0 already ingested, 0 not traces, 0 failed)\n")
    merged = [line for line in first.stderr.splitlines() if line.startswith("merged ")]
    assert merged == [f"merged {folder / name} (claude-code) into an earlier session"
                      for name in ("0199c0de-5e55-7000-8000-00000000a003.jsonl", "agent-a7f31c2.jsonl")]
    again = run("ingest", "-q", str(folder), "--store", store)
    assert again.stdout.startswith("0 episodes added, 2 skipped (already ingested), 0 quarantined — 4 files "
                                   "(4 already ingested,")


def test_quiet_prints_errors_and_the_summary_only(tmp_path, write_jsonl):
    write_jsonl([episode("a")])
    (tmp_path / "notes.txt").write_text("not a trace\n")
    (tmp_path / "broken.jsonl.gz").write_bytes(b"not gzip")
    result = run("ingest", "-q", str(tmp_path), "--store", str(tmp_path / "s.duckdb"))

    assert result.stdout == ("1 episode added, 0 skipped (already ingested), 0 quarantined — 3 files "
                             "(0 already ingested, 1 not a trace, 1 failed)\n")
    assert [line.split(":")[0] for line in result.stderr.splitlines()] == ["failed", "error"]
    assert "notes.txt" not in result.stderr


def test_info_says_how_many_agents_it_left_out(tmp_path, write_jsonl):
    path = write_jsonl([episode(f"r{i}", agent=f"agent-{i:02d}") for i in range(13)])
    store = str(tmp_path / "s.duckdb")
    run("ingest", "-q", str(path), "--store", store)
    lines = run("info", "--store", store).stdout.splitlines()
    agents = next(line for line in lines if line.startswith("agents:"))
    assert agents.endswith(", agent-09 (1), and 3 more agents")
    assert "native (1 file)" in next(line for line in lines if line.startswith("formats:"))
