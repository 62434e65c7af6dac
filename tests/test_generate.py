"""The synthetic corpus: deterministic, valid by trace-format §5, and rich in the features it claims."""
from __future__ import annotations

import gzip
import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import zstandard

from tests.native_rules import calls, leak_places, violations
from tracelab.errors import UsageError
from tracelab.generate import LEAK_PLACES, LEAK_STRINGS, GenerateStats, generate, iter_episodes
from tracelab.store import open_store

N = 2000  # episodes 7, 57, ..., 1957 leak (40); 198, 595, 992, 1389, 1786 have no steps


@pytest.fixture(scope="module")
def corpus() -> list[dict[str, Any]]:
    return list(iter_episodes(N, seed=7))


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().split(b"\n")


def test_same_seed_gives_identical_bytes_and_other_seeds_differ(tmp_path: Path) -> None:
    first = generate(tmp_path / "a.jsonl", 300, seed=5)
    second = generate(tmp_path / "b.jsonl", 300, seed=5)
    other = generate(tmp_path / "c.jsonl", 300, seed=6)
    assert first.path.read_bytes() == second.path.read_bytes()
    assert first.path.read_bytes() != other.path.read_bytes()
    assert (first.episodes, first.steps, first.tool_calls) == (
        second.episodes, second.steps, second.tool_calls,
    )


def test_the_file_holds_iter_episodes_one_per_line(tmp_path: Path) -> None:
    stats = generate(tmp_path / "a.jsonl", 300, seed=5)
    lines = _lines(stats.path)
    assert lines[-1] == b""  # ends with a newline
    records = [json.loads(line) for line in lines[:-1]]
    assert records == list(iter_episodes(300, seed=5))
    assert stats == GenerateStats(
        episodes=300,
        steps=sum(len(r["steps"]) for r in records),
        tool_calls=sum(s["kind"] == "tool_call" for r in records for s in r["steps"]),
        bytes=stats.path.stat().st_size,
        path=tmp_path / "a.jsonl",
    )
    assert [p.name for p in tmp_path.iterdir()] == ["a.jsonl"]  # no partial file left behind


@pytest.mark.parametrize(
    ("suffix", "decompress"),
    [(".jsonl.gz", gzip.decompress), (".jsonl.zst", zstandard.ZstdDecompressor().decompressobj)],
)
def test_compressed_output_is_deterministic_and_holds_the_plain_bytes(
    tmp_path: Path, suffix: str, decompress: Callable[..., Any]
) -> None:
    plain = generate(tmp_path / "p.jsonl", 200, seed=9).path.read_bytes()
    one = generate(tmp_path / f"one{suffix}", 200, seed=9).path.read_bytes()
    two = generate(tmp_path / f"two{suffix}", 200, seed=9).path.read_bytes()
    assert one == two  # gzip is written with mtime 0 and no file name
    unpacked = decompress(one) if suffix == ".jsonl.gz" else decompress().decompress(one)
    assert unpacked == plain
    assert len(one) < len(plain) / 4


def test_zero_episodes_gives_an_empty_file(tmp_path: Path) -> None:
    stats = generate(tmp_path / "sub" / "empty.jsonl", 0, seed=1)
    assert (stats.episodes, stats.steps, stats.bytes) == (0, 0, 0)
    assert stats.path.read_bytes() == b""


@pytest.mark.parametrize(("name", "count"), [("out.json", 5), ("out.txt.gz", 5), ("ok.jsonl", -1)])
def test_bad_arguments_are_usage_errors(tmp_path: Path, name: str, count: int) -> None:
    with pytest.raises(UsageError):
        generate(tmp_path / name, count, seed=1)
    assert list(tmp_path.iterdir()) == []


def test_every_episode_is_valid_and_unique(corpus: list[dict[str, Any]]) -> None:
    bad = {ep.get("episode_id"): found for ep in corpus if (found := violations(ep))}
    assert bad == {}
    assert [ep["episode_id"] for ep in corpus[:2]] == ["syn-7-0000000", "syn-7-0000001"]
    assert len({ep["episode_id"] for ep in corpus}) == N


def test_shape_of_the_corpus(corpus: list[dict[str, Any]]) -> None:
    assert len({ep["case_id"] for ep in corpus}) == 40
    assert len({ep["agent"] for ep in corpus}) == 5
    assert len({(ep["agent"], ep["agent_version"]) for ep in corpus}) == 14
    assert len({ep["model"] for ep in corpus}) == 9
    tools = {s["name"] for ep in corpus for s in ep["steps"] if s["kind"] == "tool_call"}
    assert len(tools) == 25
    mean_steps = sum(len(ep["steps"]) for ep in corpus) / N
    assert 17 <= mean_steps <= 23
    terminations = Counter(ep["termination"] for ep in corpus)
    assert set(terminations) == {
        "completed", "max_steps", "timeout", "error", "refused", "max_tokens", "cancelled",
    }
    assert 0.8 < terminations["completed"] / N < 0.92


def _has_step(ep: dict[str, Any], test: Callable[[dict[str, Any]], bool]) -> bool:
    return any(test(s) for s in ep["steps"])


def _retrieval(test: Callable[[dict[str, Any]], bool]) -> Callable[[dict[str, Any]], bool]:
    return lambda ep: _has_step(ep, lambda s: s["kind"] == "retrieval" and test(s["data"]))


def _parallel(ep: dict[str, Any]) -> bool:
    kinds = [s["kind"] for s in ep["steps"]]
    pattern = ["tool_call", "tool_call", "tool_result", "tool_result"]
    return any(kinds[i:i + 4] == pattern for i in range(len(kinds)))


def _reused_ids(ep: dict[str, Any]) -> bool:
    ids = [s["call_id"] for s in ep["steps"] if s["kind"] == "tool_call" and s["call_id"]]
    return len(ids) != len(set(ids))


def _calls(test: Callable[[Any], bool]) -> Callable[[dict[str, Any]], bool]:
    return lambda ep: any(test(c) for c in calls(ep))


TEXT = json.dumps  # the whole record as text, for characters anywhere in it

FEATURES: dict[str, Callable[[dict[str, Any]], bool]] = {
    "declared tools": lambda ep: bool(ep.get("tools")),
    "empty tool list": lambda ep: ep.get("tools") == [],
    "no tools key": lambda ep: "tools" not in ep,
    "tools: null": lambda ep: "tools" in ep and ep["tools"] is None,
    "definition without effect": lambda ep: any("effect" not in t for t in ep.get("tools") or []),
    "effect on a tool_call step": lambda ep: _has_step(ep, lambda s: "effect" in s),
    "args as a JSON string": lambda ep: _has_step(ep, lambda s: isinstance(s.get("args"), str)),
    "args keys differing by case": lambda ep: _has_step(
        ep, lambda s: isinstance(s.get("args"), dict) and {"amount", "Amount"} <= set(s["args"])),
    "executed write": _calls(lambda c: c.effect == "write" and c.status == "ok"),
    "denied write": _calls(lambda c: c.effect == "write" and c.status == "denied"),
    "failed write": _calls(lambda c: c.effect == "write" and c.status == "error"),
    "call without result": _calls(lambda c: c.status == "missing"),
    "error flagged by is_error": lambda ep: _has_step(ep, lambda s: s.get("is_error") is True),
    "parallel calls": _parallel,
    "reused call ids": _reused_ids,
    "empty call ids": lambda ep: _has_step(ep, lambda s: s.get("call_id") == ""),
    "confirmation": lambda ep: _has_step(ep, lambda s: s["kind"] == "confirmation"),
    "budget with steps_used": lambda ep: _has_step(ep, lambda s: "steps_used" in s),
    "budget with tokens only": lambda ep: _has_step(
        ep, lambda s: s["kind"] == "budget" and "steps_used" not in s),
    "retrieval with a superseded candidate": _retrieval(
        lambda d: any(c.get("superseded_by") is not None for c in d["candidates"])),
    "retrieval returning a superseded item": _retrieval(
        lambda d: any(c["id"] in d["returned"] and c.get("superseded_by") is not None
                      for c in d["candidates"])),
    "retrieval with omitted": _retrieval(lambda d: "omitted" in d),
    "retrieval without omitted": _retrieval(lambda d: "omitted" not in d),
    "retrieval with budget_bytes": _retrieval(lambda d: "budget_bytes" in d),
    "retrieval over budget": _retrieval(lambda d: "budget_bytes" in d and d["budget_bytes"] < sum(
        len(c["content"].encode()) for c in d["candidates"] if c["id"] in d["returned"])),
    "error step": lambda ep: _has_step(ep, lambda s: s["kind"] == "error"),
    "event step": lambda ep: _has_step(ep, lambda s: s["kind"] == "event"),
    "system step": lambda ep: _has_step(ep, lambda s: s["kind"] == "system"),
    "step ts and duration_ms": lambda ep: _has_step(ep, lambda s: "ts" in s and "duration_ms" in s),
    "run-level error": lambda ep: "error" in ep,
    "reward": lambda ep: "reward" in ep,
    "no reward": lambda ep: "reward" not in ep,
    "no final output": lambda ep: "output" not in ep,
    "principal": lambda ep: set(ep["principal"]) == {"user_id", "org_id", "role", "email"},
    "meta": lambda ep: "meta" in ep,
    "Turkish dotted İ": lambda ep: "İ" in TEXT(ep, ensure_ascii=False),
    "Greek Σ": lambda ep: "Σ" in TEXT(ep, ensure_ascii=False),
    "emoji": lambda ep: "🙏" in TEXT(ep, ensure_ascii=False) or "📦" in TEXT(ep, ensure_ascii=False),
    "U+2028 inside a string": lambda ep: "\u2028" in TEXT(ep, ensure_ascii=False),
}


@pytest.mark.parametrize("feature", sorted(FEATURES))
def test_corpus_contains_feature(corpus: list[dict[str, Any]], feature: str) -> None:
    assert sum(1 for ep in corpus if FEATURES[feature](ep)) >= 1, feature


def test_tool_availability_mix(corpus: list[dict[str, Any]]) -> None:
    declared = sum(1 for ep in corpus if ep.get("tools"))
    empty = sum(1 for ep in corpus if ep.get("tools") == [])
    unknown = sum(1 for ep in corpus if ep.get("tools") is None)
    assert declared + empty + unknown == N
    assert 0.74 < declared / N < 0.86 and 0.04 < empty / N < 0.10 and 0.09 < unknown / N < 0.17


def test_zero_step_episodes_are_scheduled(corpus: list[dict[str, Any]]) -> None:
    empty = [i for i, ep in enumerate(corpus) if ep["steps"] == []]
    assert empty == [198, 595, 992, 1389, 1786]
    assert {corpus[i]["termination"] for i in empty} == {"cancelled"}


# where each planted place shows up in the transcript (legacy runtimes put an error in `text`)
PLACE_FRAGMENTS = {
    "tool_result": [{"tool_result.data"}],
    "tool_args": [{"tool_call.data"}],
    "tool_error": [{"tool_result.error"}, {"tool_result.text"}],
    "confirmation": [{"confirmation.data"}],
    "retrieval": [{"retrieval.data"}],
    "output": [{"output", "assistant.text"}],
}


def test_leaks_are_exactly_the_labelled_runs_in_the_labelled_place(
    corpus: list[dict[str, Any]],
) -> None:
    labelled = {i: ep["meta"]["planted_leak"] for i, ep in enumerate(corpus)
                if "planted_leak" in ep.get("meta", {})}
    assert sorted(labelled) == list(range(7, N, 50))
    assert Counter(labelled.values()) == {
        "tool_result": 7, "tool_args": 7, "tool_error": 7, "confirmation": 7,
        "retrieval": 6, "output": 6,
    }
    assert set(labelled.values()) == set(LEAK_PLACES)
    planted: Counter[str] = Counter()
    for i, ep in enumerate(corpus):
        found = {s: places for s in LEAK_STRINGS if (places := leak_places(ep, s))}
        if i not in labelled:
            assert found == {}, ep["episode_id"]
            continue
        assert len(found) == 1, ep["episode_id"]
        secret, places = found.popitem()
        assert places in PLACE_FRAGMENTS[labelled[i]], ep["episode_id"]
        planted[secret] += 1
    # the secret is LEAK_STRINGS[(i // 300) % 3]: i < 300, 900-1199 and 1800+ carry the key
    assert planted == {LEAK_STRINGS[0]: 16, LEAK_STRINGS[1]: 12, LEAK_STRINGS[2]: 12}


def test_no_unlabelled_run_mentions_a_secret_anywhere(corpus: list[dict[str, Any]]) -> None:
    clean = [ep for ep in corpus if "planted_leak" not in ep.get("meta", {})]
    text = "\n".join(json.dumps(ep, ensure_ascii=False) for ep in clean).lower()
    assert [s for s in LEAK_STRINGS if s.lower() in text] == []
    assert "sk-live-" not in text


def test_ingest_loads_a_generated_file_as_generated(tmp_path: Path) -> None:
    stats = generate(tmp_path / "g.jsonl.zst", 300, seed=11)
    expected = sorted(
        (ep["episode_id"], c.call_index, c.result_step_idx, c.status, c.effect)
        for ep in iter_episodes(300, seed=11) for c in calls(ep)
    )
    with open_store(tmp_path / "s.duckdb") as store:
        report = store.ingest([stats.path])
        assert (report.added, report.quarantined) == (300, 0)
        counts = store.sql("SELECT (SELECT sum(n_steps) FROM episodes)::BIGINT, "
                           "(SELECT count(*) FROM tool_calls)").rows()
        assert counts == [(stats.steps, stats.tool_calls)]
        rows = store.sql("SELECT episode_id, call_index, result_step_idx, status, effect "
                         "FROM tool_calls ORDER BY episode_id, call_index").rows()
    assert rows == expected
