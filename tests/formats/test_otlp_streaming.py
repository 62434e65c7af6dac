"""The span formats read a file in two passes and hold only the episodes open at once."""
from __future__ import annotations

import json
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.formats.span_builders import ROOT, TRACE, calls, chat, record, responds, said, span, tool
from tracelab.errors import DataError
from tracelab.formats import openinference, otlp
from tracelab.formats.base import Quarantined
from tracelab.formats.records import records
from tracelab.formats.source import Source

OTHER = "0af7651916cd43dd8448eb211c80319c"
U = said("user", "Refund order 8812")
A1 = calls(("c1", "get_order", {"id": "8812"}))
FIRST = chat("a000000000000001", 10, 100, [U], [A1])
TOOL = tool("a000000000000002", 110, 150, "get_order", "c1", '{"id": "8812"}', "delivered")
LAST = chat("a000000000000003", 160, 300, [U, A1, responds("c1", "delivered")],
            [said("assistant", "Refunded.")])
HELLO = chat("b000000000000001", 5, 8, [said("user", "Hi")], [said("assistant", "Hello")],
             trace=OTHER)
BYE = chat("b000000000000002", 400, 410, [said("user", "Hi"), said("assistant", "Hello"),
                                          said("user", "Bye")], [said("assistant", "Bye!")],
           trace=OTHER)


def filler(index: int) -> dict:
    """A one-span episode of its own trace (trace ids 1, 2, ... in hex)."""
    return record(span(ROOT, 0, 5, {"gen_ai.operation.name": "invoke_agent"}, parent=None,
                       trace=f"{index + 1:032x}"))


def lines_of(items: list) -> list[tuple[str, int, str]]:
    return [("quarantined", i.line, i.reason[:12]) if isinstance(i, Quarantined)
            else ("episode", i[0], i[1]["episode_id"]) for i in items]


def test_interleaved_traces_split_far_apart_give_the_same_episodes(adapt) -> None:
    together = adapt(otlp, record(FIRST, TOOL, LAST), record(HELLO, BYE))
    fillers = [filler(i) for i in range(50)]
    # TRACE: lines 1, 3 and 56; OTHER: lines 2 and 4; a bad line 5 while TRACE is still open
    apart = adapt(otlp, record(FIRST), record(HELLO), record(TOOL), record(BYE), '{"cut',
                  *fillers, record(LAST))
    assert lines_of(apart) == [
        ("episode", 1, TRACE), ("episode", 2, OTHER), ("quarantined", 5, "invalid JSON"),
        *[("episode", 6 + i, f"{i + 1:032x}") for i in range(50)],
    ]
    # the same episodes as when each trace is one record (only their lines differ)
    assert [apart[0][1], apart[1][1]] == [together[0][1], together[1][1]]
    assert [s["kind"] for s in apart[0][1]["steps"]] == [
        "user", "tool_call", "tool_result", "assistant"]


def test_a_late_span_naming_a_conversation_pulls_in_its_trace_from_the_start(adapt) -> None:
    conversation = {"gen_ai.conversation.id": "conv-9"}
    tagged = chat("a000000000000003", 160, 300, [U, A1, responds("c1", "delivered")],
                  [said("assistant", "Refunded.")], attributes=conversation)
    later = chat("b000000000000002", 5, 8, [said("user", "Hi")], [said("assistant", "Hello")],
                 trace=OTHER, attributes=conversation)
    # TRACE's first spans name no conversation; its last span, 30 lines on, names conv-9
    items = adapt(otlp, record(FIRST, TOOL), record(later), *[filler(i) for i in range(28)],
                  record(tagged))
    assert lines_of(items)[:2] == [("episode", 1, "conv-9"), ("episode", 3, f"{1:032x}")]
    assert len(items) == 29
    episode = items[0][1]
    assert episode["meta"] == {"trace_ids": [OTHER, TRACE]}  # OTHER's span starts first
    # FIRST's one input message is within OTHER's earlier input + output: it adds no step
    assert [(s["kind"], s.get("text")) for s in episode["steps"]] == [
        ("user", "Hi"), ("assistant", "Hello"), ("tool_call", None),
        ("tool_result", "delivered"), ("assistant", "Refunded.")]


def test_a_quarantined_line_after_an_episode_ends_still_taints_it(adapt) -> None:
    broken = record(tool("a000000000000009", 1, 2, "x", "c9"))
    broken["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["startTimeUnixNano"] = "soon"
    items = adapt(otlp, record(FIRST, TOOL, LAST), filler(0), broken)
    assert lines_of(items) == [("quarantined", 1, "episode 5b8e"), ("episode", 2, f"{1:032x}"),
                               ("quarantined", 3, "resourceSpan")]
    assert items[0].reason.endswith(f"trace {TRACE} also has spans on line 3, which was "
                                    "quarantined; not loaded incomplete")


def test_openinference_streams_phoenix_spans_the_same_way(adapt) -> None:
    def phoenix(trace: str, span_id: str, second: int) -> dict:
        return {"name": "t", "context": {"trace_id": trace, "span_id": span_id},
                "span_kind": "TOOL", "start_time": f"2026-03-02T09:15:0{second}Z",
                "end_time": f"2026-03-02T09:15:0{second}Z",
                "attributes": {"tool.name": f"step{second}", "tool.id": f"c{second}"}}

    items = adapt(openinference, phoenix(TRACE, "a000000000000001", 1),
                  phoenix(OTHER, "b000000000000001", 2), phoenix(TRACE, "a000000000000002", 3))
    assert lines_of(items) == [("episode", 1, TRACE), ("episode", 2, OTHER)]
    assert [s["name"] for s in items[0][1]["steps"]] == ["step1", "step1", "step3", "step3"]


class _Growing(Source):
    """A file that gains a line of a new trace between the two passes."""

    def __init__(self, path: Path, extra: bytes) -> None:
        super().__init__(path)
        self.extra = extra
        self.reads = 0

    def lines(self, chunk_size: int = 1 << 22) -> Iterator[tuple[int, bytes]]:
        self.reads += 1
        number = 0
        for number, line in super().lines(chunk_size):
            yield number, line
        if self.reads > 1:
            yield number + 1, self.extra


def test_a_file_that_changes_between_the_passes_is_not_loaded(write_jsonl) -> None:
    source = _Growing(write_jsonl([record(FIRST, TOOL, LAST)]), json.dumps(filler(0)).encode())
    with pytest.raises(DataError, match="changed while it was read; nothing of it was loaded"):
        list(otlp.episodes(source))


# -- memory --------------------------------------------------------------------------------

EPISODES = 4_000
PAYLOAD = 4_000


def _write_corpus(path: Path) -> None:
    """`EPISODES` three-span episodes, one per line, each carrying a `PAYLOAD`-character result."""
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(EPISODES):
            trace, result = f"{i + 1:032x}", f"{i:08d}" + "x" * PAYLOAD
            asked = calls((f"c{i}", "get_order", {"id": i}))
            fh.write(json.dumps(record(
                chat("a000000000000001", 10, 100, [U], [asked], trace=trace),
                tool("a000000000000002", 110, 150, "get_order", f"c{i}", "{}", result, trace=trace),
                chat("a000000000000003", 160, 300, [U, asked, responds(f"c{i}", result)],
                     [said("assistant", "Refunded.")], trace=trace),
            )) + "\n")


def _peak(items: Iterator[object]) -> tuple[int, int]:
    """``(count, peak traced bytes)`` of consuming `items` one at a time."""
    tracemalloc.start()
    try:
        count = sum(1 for _ in items)
        return count, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_follows_one_episode_and_the_ids_not_the_file(tmp_path: Path) -> None:
    path = tmp_path / "corpus.jsonl"
    _write_corpus(path)
    size = path.stat().st_size
    episode_bytes = size // EPISODES  # ~10 KB: one line holds one episode
    lines, reading = _peak(records(Source(path)))
    episodes, adapting = _peak(otlp.episodes(Source(path)))
    assert (lines, episodes) == (EPISODES, EPISODES)
    extra = adapting - reading  # beyond reading the lines themselves (4 MiB blocks)
    # the first pass keeps ids and line numbers (under 300 bytes an episode); the second,
    # one episode's spans at a time: a few episodes' worth
    assert extra < 300 * EPISODES + 8 * episode_bytes
    # holding the file's spans would need more than the file's 42 MB
    assert extra < size // 40
