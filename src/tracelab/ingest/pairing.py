"""The sequential call/result pairing rule of docs/trace-format.md §2, for episodes SQL cannot pair by a join."""
from __future__ import annotations

from collections.abc import Iterable, Iterator


def pair_steps(
    steps: Iterable[tuple[int, str, str | None, str | None]],
) -> Iterator[tuple[int, int]]:
    """Pair one episode's results with its calls.

    Args:
        steps: ``(idx, kind, name, call_id)`` of the episode's ``tool_call`` and
            ``tool_result`` steps, in step order.

    Yields:
        ``(call_idx, result_idx)`` for every result that pairs with a call. A
        result considers only the still-unpaired calls before it: the earliest
        with the same non-empty call id; else the earliest with the same
        non-empty name; else the earliest of them all.
    """
    open_calls: list[tuple[int, str | None, str | None]] = []
    for idx, kind, name, call_id in steps:
        if kind == "tool_call":
            open_calls.append((idx, name, call_id))
            continue
        if not open_calls:
            continue
        chosen = _choose(open_calls, name, call_id)
        yield open_calls.pop(chosen)[0], idx


def _choose(open_calls: list[tuple[int, str | None, str | None]], name: str | None,
            call_id: str | None) -> int:
    if call_id:
        for pos, (_, _, cid) in enumerate(open_calls):
            if cid == call_id:
                return pos
    if name:
        for pos, (_, cname, _) in enumerate(open_calls):
            if cname == name:
                return pos
    return 0
