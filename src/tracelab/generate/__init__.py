"""A synthetic corpus in the native format, deterministic for a seed.

`iter_episodes` yields realistic `tracelab.episode/v1` dicts (five agent
families, 40 eval cases, 25 tools); `generate` writes them as JSON Lines,
plain, gzip or zstd by the file's suffix. The same seed gives a byte-identical
file. A few runs leak planted secrets (`LEAK_STRINGS`, in the kinds of places
listed in `LEAK_PLACES`) and are labelled with ``meta.planted_leak`` so that
a leak check can be scored against ground truth; no other run contains them.

Beside the stages: the emitters write the other input formats (`emit`, `emit_otlp`). May import
`tracelab.formats`, `tracelab.ingest` (its call pairing) and the foundation modules; only the CLI imports it.
"""
from __future__ import annotations

import datetime as dt
import gzip
import os
import random
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import orjson

from tracelab.errors import UsageError
from tracelab.generate.catalog import CASES, DOMAINS, Case, Domain, Rnd, Tool, pick

__all__ = ["LEAK_PLACES", "LEAK_STRINGS", "GenerateStats", "generate", "iter_episodes"]

FORMAT = "tracelab.episode/v1"

LEAK_STRINGS: tuple[str, ...] = ("sk-live-3xQ9vT7pL2mW8kR4", "ACCT-77031942", "Ilse Brandvold")
"""The planted secrets: an API key, an account number, a person's name."""

LEAK_PLACES: tuple[str, ...] = (
    "tool_result", "tool_args", "tool_error", "confirmation", "retrieval", "output",
)
"""Where a leaking run carries its secret (the value of its ``meta.planted_leak``)."""

LEAK_EVERY = 50  # episode i leaks when i % LEAK_EVERY == LEAK_OFFSET: 2% of runs
LEAK_OFFSET = 7
ZERO_STEP_EVERY = 397  # episode i has no steps when i % 397 == 198: a run cancelled at once

# (termination, cumulative probability) for runs that neither leak nor are empty
_TERMINATIONS = (
    ("completed", 0.86), ("max_steps", 0.90), ("timeout", 0.93), ("error", 0.96),
    ("refused", 0.98), ("max_tokens", 0.99), ("cancelled", 1.0),
)
_ENVS = ("prod", "prod", "prod", "staging", "canary", "nightly")
_REGIONS = ("eu", "us", "apac")
_REWARDS = (1.0, 1.0, 1.0, 0.5, 0.0)
_RUNTIME_ERRORS = (
    "model provider rate limit (429), retrying in 2 s",
    "context window 92% full, summarising history",
    "tool router: schema warning on last call, continuing",
)
_FATAL_ERRORS = (
    "upstream model error 503 after 3 retries",
    "runtime crashed: out of memory in sandbox",
)
_REFUSAL = "I can't help with that request."
_NO_TOOLS = "I don't have the tools for that in this session."
_DAYS = tuple(
    (dt.date(2026, 10, 1) + dt.timedelta(days=d)).isoformat() for d in range(61)
)


@dataclass(frozen=True)
class GenerateStats:
    """What `generate` wrote: counts, the file's size on disk, its path."""

    episodes: int
    steps: int
    tool_calls: int
    bytes: int
    path: Path


def iter_episodes(n: int, seed: int) -> Iterator[dict[str, Any]]:
    """Yield `n` native episode dicts, the same ones for the same `seed`.

    Episode ids are ``syn-<seed>-<index>``, so corpora of different seeds can
    share a store. For speed, episodes share their unchanging parts (tool
    lists, principals, result payloads): treat them as read-only, and copy
    before changing one.
    """
    rng = random.Random(seed)
    for i in range(n):
        yield _episode(i, seed, rng)


def generate(out: str | Path, episodes: int, seed: int, as_format: str = "native") -> GenerateStats:
    """Write `episodes` synthetic episodes to `out`, deterministically for `seed`.

    `as_format` writes them in another input format instead of the native one
    (``openai-chat``, ``anthropic``: `tracelab.generate.emit.EMITTERS`; ``otlp``: `emit_otlp`);
    what that format cannot carry is lost, as it would be in a real recording.

    The suffix picks the encoding: ``.jsonl``, ``.jsonl.gz`` (gzip, mtime 0)
    or ``.jsonl.zst``. The file appears complete or not at all (it is written
    beside `out` and renamed).

    Raises:
        UsageError: a negative episode count or an unsupported suffix.
    """
    path = Path(out)
    if episodes < 0:
        raise UsageError(f"--episodes must be 0 or more, got {episodes}")
    if not path.name.endswith((".jsonl", ".jsonl.gz", ".jsonl.zst")):
        raise UsageError(f"{path}: OUT must end in .jsonl, .jsonl.gz or .jsonl.zst")
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    try:
        n_steps, n_calls = _write(partial, episodes, seed, _encoder(as_format))
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    os.replace(partial, path)
    return GenerateStats(episodes, n_steps, n_calls, path.stat().st_size, path)


def _encoder(as_format: str) -> Callable[[dict[str, Any]], bytes]:
    if as_format == "native":
        return orjson.dumps
    from tracelab.generate.emit import EMITTERS
    from tracelab.generate.emit_otlp import to_otlp

    emitters = {**EMITTERS, "otlp": to_otlp}
    if as_format not in emitters:
        raise UsageError(f"--as {as_format}: unknown; choose native, {', '.join(emitters)}")
    emit = emitters[as_format]
    return lambda episode: orjson.dumps(emit(episode))


def _write(path: Path, episodes: int, seed: int,
           encode: Callable[[dict[str, Any]], bytes]) -> tuple[int, int]:
    """Write the episodes in batches; return (steps, tool calls)."""
    n_steps = n_calls = 0
    batch: list[bytes] = []
    with ExitStack() as stack:
        fh = _open_for_write(path, stack)
        for ep in iter_episodes(episodes, seed):
            steps = ep["steps"]
            n_steps += len(steps)
            n_calls += sum(1 for s in steps if s["kind"] == "tool_call")
            batch.append(encode(ep))
            if len(batch) == 4096:
                _flush(fh, batch)
        _flush(fh, batch)
    return n_steps, n_calls


class _Writer(Protocol):
    """What the corpus is written through: a plain, gzip or zstd byte stream."""

    def write(self, data: bytes, /) -> int: ...


def _open_for_write(path: Path, stack: ExitStack) -> _Writer:
    raw = stack.enter_context(open(path, "wb"))
    if path.name.endswith(".gz.partial"):
        return stack.enter_context(
            gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=6)
        )
    if path.name.endswith(".zst.partial"):
        import zstandard

        return stack.enter_context(zstandard.ZstdCompressor(level=3).stream_writer(raw))
    return raw


def _flush(fh: _Writer, batch: list[bytes]) -> None:
    if batch:
        batch.append(b"")
        fh.write(b"\n".join(batch))
        batch.clear()


# ---------------------------------------------------------------- one episode


def _episode(i: int, seed: int, rng: random.Random) -> dict[str, Any]:
    rnd = rng.random
    case = pick(rnd, CASES)
    dom = DOMAINS[case.domain]
    v = int(rnd() * len(dom.versions))
    run = _Run(rng, dom, dom.id_styles[v], pick(rnd, _DAYS), int(rnd() * 80_000))
    started_at = run.now()
    task = pick(rnd, case.inputs)
    tools = _offered_tools(rnd, dom)
    leak = None
    if i % ZERO_STEP_EVERY == ZERO_STEP_EVERY // 2:
        termination, output, error = "cancelled", None, None
    else:
        if i % LEAK_EVERY == LEAK_OFFSET:
            leak = LEAK_PLACES[(i // LEAK_EVERY) % len(LEAK_PLACES)]
            tools = dom.definitions if tools == [] else tools  # a leak needs the tools it uses
        termination = "completed" if leak else _termination(rnd)
        secret = LEAK_STRINGS[(i // (LEAK_EVERY * len(LEAK_PLACES))) % len(LEAK_STRINGS)]
        output, error = _play(run, case, task, tools, termination, leak, secret)
    ep: dict[str, Any] = {
        "format": FORMAT,
        "episode_id": f"syn-{seed}-{i:07d}",
        "agent": dom.agent,
        "agent_version": dom.versions[v],
        "model": pick(rnd, dom.models),
        "case_id": case.case_id,
        "principal": pick(rnd, dom.principals),
        "input": task,
    }
    if output is not None:
        ep["output"] = output
    ep["termination"] = termination
    if error is not None:
        ep["error"] = error
    if rnd() < 0.9:
        ep["reward"] = pick(rnd, _REWARDS) if termination == "completed" else 0.0
    ep["started_at"] = started_at
    ep["ended_at"] = run.now()
    ep["tags"] = _tags(rnd)
    if tools is not False:
        ep["tools"] = tools
    ep["steps"] = run.steps
    if leak:
        ep["meta"] = {"planted_leak": leak}
    elif rnd() < 0.25:
        ep["meta"] = {"trace_id": f"{rng.getrandbits(64):016x}", "region": pick(rnd, _REGIONS)}
    return ep


def _offered_tools(rnd: Rnd, dom: Domain) -> list[dict[str, Any]] | None | bool:
    """The episode's `tools`: mostly the domain's list; `[]`; None; or False for no key."""
    x = rnd()
    if x < 0.72:
        return dom.definitions
    if x < 0.80:  # a runtime that offered all but one tool
        drop = int(rnd() * len(dom.definitions))
        return dom.definitions[:drop] + dom.definitions[drop + 1:]
    if x < 0.87:
        return []
    return False if x < 0.97 else None


def _termination(rnd: Rnd) -> str:
    x = rnd()
    for name, upto in _TERMINATIONS:
        if x < upto:
            return name
    return "completed"


def _tags(rnd: Rnd) -> list[str]:
    tags = [pick(rnd, _ENVS), pick(rnd, _REGIONS)]
    if rnd() < 0.1:
        tags.append("regression")
    return tags


def _play(
    run: _Run, case: Case, task: str, tools: Any, termination: str, leak: str | None, secret: str
) -> tuple[str | None, str | None]:
    """Fill `run.steps` for one case; return the episode's (output, error)."""
    rnd = run.rnd
    if rnd() < 0.6:
        run.add({"kind": "system", "text": run.dom.system})
    run.add({"kind": "user", "text": task})
    if termination == "refused":
        run.say(_REFUSAL)
        return _REFUSAL, None
    if tools == []:
        return _play_without_tools(run, case)
    turns = _turns(run, case)
    if termination == "max_steps":
        return _play_until_limit(run, case, turns)
    if termination in ("timeout", "error", "cancelled"):
        return _play_interrupted(run, case, turns, termination)
    for turn in turns:
        run.turn(turn, case)
    if case.retrieval:
        run.retrieval()
    output = pick(rnd, case.outputs)
    if leak:
        output = _plant(run, leak, secret, output)
    if termination == "max_tokens":
        output = output[: len(output) // 2]
    run.say(output)
    return output, None


def _turns(run: _Run, case: Case) -> list[tuple[Tool, ...]]:
    """The case's plan with a few exploratory reads mixed in (about 20 steps a run)."""
    rnd = run.rnd
    dom = run.dom
    turns = [tuple(dom.by_name[name] for name in turn) for turn in case.plan]
    for _ in range(int(rnd() * rnd() * 19)):
        tool = pick(rnd, run.reads)
        extra = (tool, pick(rnd, run.reads)) if rnd() < 0.12 else (tool,)
        turns.insert(int(rnd() * (len(turns) + 1)), extra)
    return turns


def _play_without_tools(run: _Run, case: Case) -> tuple[str | None, str | None]:
    if case.plan and run.rnd() < 0.3:  # the model calls a tool nobody offered
        tool = run.dom.by_name[case.plan[0][0]]
        cid = run.call(tool, 0)
        run.result(tool, cid, "error", f"unknown tool: {tool.name}")
    run.say(_NO_TOOLS)
    return _NO_TOOLS, None


def _play_until_limit(
    run: _Run, case: Case, turns: list[tuple[Tool, ...]]
) -> tuple[None, str | None]:
    limit = pick(run.rnd, (8, 10, 12))
    while run.turns < limit:
        run.turn(turns[run.turns % len(turns)] if turns else (pick(run.rnd, run.reads),), case)
    run.budget(steps_used=limit)
    return None, (f"step limit {limit} reached" if run.rnd() < 0.5 else None)


def _play_interrupted(
    run: _Run, case: Case, turns: list[tuple[Tool, ...]], termination: str
) -> tuple[None, str | None]:
    for turn in turns[: int(run.rnd() * len(turns))]:
        run.turn(turn, case)
    if termination == "cancelled":
        return None, None
    if termination == "timeout":
        tool = turns[-1][0] if turns else pick(run.rnd, run.reads)
        run.call(tool, 0)  # its result never came
        message = f"timeout: {tool.name} did not answer within 30 s"
    else:
        message = pick(run.rnd, _FATAL_ERRORS)
    run.add({"kind": "error", "text": message})
    return None, message


def _plant(run: _Run, place: str, secret: str, output: str) -> str:
    """Put `secret` in one place of the run; return the (possibly leaking) output."""
    read = run.reads[0]
    if place == "output":
        return f"{output} (ref: {secret})"
    if place == "retrieval":
        run.retrieval(planted=f"Internal note, do not share: {secret}")
    elif place == "confirmation":
        args = run.writes[0].args(run.rnd)
        args["note"] = f"on behalf of {secret}"
        run.add({"kind": "confirmation", "name": run.writes[0].name, "args": args,
                 "text": f"Approve {run.writes[0].name}?"})
    elif place == "tool_args":
        args = read.args(run.rnd)
        args["context"] = secret
        run.result(read, run.call(read, 0, args), "ok")
    elif place == "tool_error":
        run.result(read, run.call(read, 0), "error", f"upstream rejected credentials {secret}")
    else:  # tool_result
        cid = run.call(read, 0)
        run.add({"kind": "tool_result", "call_id": cid,
                 "result": {"record": secret, "source": "crm"}})
    return output


class _Run:
    """One episode's step log under construction, with its clock and counters."""

    def __init__(self, rng: random.Random, dom: Domain, style: str, day: str, clock: int) -> None:
        self.rng = rng
        self.rnd = rng.random
        self.dom = dom
        self.style = style  # call-id style: counter, openai, anthropic, reused, empty
        self.legacy = style in ("reused", "empty")  # legacy runtimes flag errors with is_error
        self.day = day
        self.clock = clock
        self.steps: list[dict[str, Any]] = []
        self.calls = 0
        self.turns = 0
        self.tokens = 0
        self.reads = tuple(t for t in dom.tools if t.effect == "read")
        self.writes = tuple(t for t in dom.tools if t.effect == "write")

    def now(self) -> str:
        c = self.clock
        return f"{self.day}T{c // 3600:02d}:{c // 60 % 60:02d}:{c % 60:02d}Z"

    def add(self, step: dict[str, Any]) -> None:
        self.clock += 1 + int(self.rnd() * 4)
        if self.dom.timed:
            step["ts"] = self.now()
        self.steps.append(step)

    def say(self, text: str) -> None:
        self.add({"kind": "assistant", "text": text})

    def budget(self, steps_used: int | None = None) -> None:
        step: dict[str, Any] = {"kind": "budget"}
        if steps_used is not None or self.rnd() < 0.9:  # some runtimes count only tokens
            step["steps_used"] = self.turns if steps_used is None else steps_used
        step["tokens_used"] = self.tokens
        self.add(step)

    def turn(self, tools: tuple[Tool, ...], case: Case) -> None:
        """One model turn: maybe a thought, its calls (2 = parallel), their results."""
        rnd = self.rnd
        self.turns += 1
        self.tokens += 300 + int(rnd() * 1200)
        if rnd() < 0.55:
            self.say(pick(rnd, self.dom.think))
        pending = []
        for k, tool in enumerate(tools):
            outcome = self._outcome(tool, case)
            if outcome == "confirm":
                args = tool.args(rnd)
                self.add({"kind": "confirmation", "name": tool.name, "args": args,
                          "text": f"Approve {tool.name.replace('_', ' ')}: "
                                  f"{', '.join(f'{a}={b}' for a, b in args.items())}?"})
            else:
                pending.append((tool, self.call(tool, k), outcome))
        if len(pending) > 1 and rnd() < 0.5:
            pending.reverse()
        for tool, cid, outcome in pending:
            if rnd() >= 0.02:  # else the runtime lost the result
                self.result(tool, cid, outcome)
        if rnd() < 0.45:
            self.budget()
        if rnd() < 0.03:
            self.add({"kind": "error", "text": pick(rnd, _RUNTIME_ERRORS)})
        if rnd() < 0.02:
            self.add({"kind": "event", "name": "handoff",
                      "data": {"from": "triage", "to": self.dom.agent}})

    def _outcome(self, tool: Tool, case: Case) -> str:
        x = self.rnd()
        if tool.effect == "read":
            deny = case.deny_read
            return "denied" if x < deny else "error" if x < deny + 0.04 else "ok"
        confirm, deny = case.confirm, case.deny
        if x < confirm:
            return "confirm"
        x = (x - confirm) / (1 - confirm)
        return "denied" if x < deny else "error" if x < deny + 0.08 else "ok"

    def call(self, tool: Tool, k: int, args: dict[str, Any] | None = None) -> str:
        """Record a tool_call step; `k` is its position in a parallel turn."""
        self.calls += 1
        cid = self._call_id(k)
        if args is None:
            args = tool.args(self.rnd)
        step: dict[str, Any] = {
            "kind": "tool_call", "name": tool.name, "call_id": cid, "args": args,
        }
        if self.style == "openai" and self.rnd() < 0.25:  # OpenAI records arguments as JSON text
            step["args"] = orjson.dumps(args).decode()
        if self.rnd() < 0.15:
            step["effect"] = tool.effect
        self.add(step)
        return cid

    def _call_id(self, k: int) -> str:
        style = self.style
        if style == "counter":
            return f"c{self.calls}"
        if style == "openai":
            return f"call_{self.rng.getrandbits(48):012x}"
        if style == "anthropic":
            return f"toolu_01{self.rng.getrandbits(64):016x}"
        if style == "reused":  # numbered within the turn: the same ids recur every turn
            return f"call_{k}"
        return ""

    def result(self, tool: Tool, cid: str, outcome: str, message: str | None = None) -> None:
        """Record the tool_result of call `cid`: ok, error or denied."""
        rnd = self.rnd
        step: dict[str, Any] = {"kind": "tool_result", "call_id": cid}
        if cid == "" or rnd() < 0.2:
            step["name"] = tool.name
        if outcome == "ok":
            payload = pick(rnd, tool.ok)
            step["text" if isinstance(payload, str) else "result"] = payload
            if rnd() < 0.4:
                step["status"] = "ok"
        elif outcome == "error":
            message = message or pick(rnd, tool.errors)
            if self.legacy:
                step["is_error"] = True
                step["text"] = message
            else:
                step["status"] = "error"
                step["error"] = message
        else:
            step["status"] = "denied"
            step["error"] = pick(rnd, tool.denials) if tool.denials else "permission denied"
        if self.dom.timed:
            step["duration_ms"] = 40 + int(rnd() * 3000)
        self.add(step)

    def retrieval(self, planted: str | None = None) -> None:
        """A retrieval step over the domain's knowledge base (or a planted note)."""
        rnd = self.rnd
        kb = self.dom.kb or _FALLBACK_KB
        k = min(len(kb), 3 + int(rnd() * 3))
        start = int(rnd() * len(kb))
        score = 0.97
        candidates = []
        for j in range(k):
            doc_id, content, superseded_by = kb[(start + j) % len(kb)]
            score -= 0.03 + rnd() * 0.1
            cand: dict[str, Any] = {"id": doc_id, "score": round(score, 3), "content": content}
            if superseded_by is not None or rnd() < 0.3:
                cand["superseded_by"] = superseded_by
            candidates.append(cand)
        if planted is not None:
            candidates.insert(0, {"id": "note-1", "score": 0.99, "content": planted})
        current = [c for c in candidates if c.get("superseded_by") is None]
        chosen = candidates[:2] if rnd() < 0.1 else current[:2]  # 10%: stale items slip through
        data: dict[str, Any] = {"query": pick(rnd, self.dom.think), "candidates": candidates,
                                "returned": [c["id"] for c in chosen]}
        x = rnd()
        if x < 0.8:  # 10% miscount, 20% do not report omissions at all
            data["omitted"] = len(candidates) - len(chosen) + (x >= 0.7)
        if rnd() < 0.5:
            used = sum(len(c["content"].encode()) for c in chosen)
            data["budget_bytes"] = used + int(rnd() * 200) if rnd() < 0.8 else max(used - 40, 1)
        self.add({"kind": "retrieval", "data": data})


_FALLBACK_KB = (("doc-1", "No article matches this topic yet.", None),)
