"""Acceptance on real coding-agent sessions (issue 25): every file of
../shared/real_traces/coding_agents/ (SOURCE.txt: real Claude Code and Codex CLI sessions from
public repositories, and other tools' hand-written fixtures) ingests, and per session tracelab's
counts equal counts computed here from the raw lines with plain `json`.

The counts below are an independent reading of the formats as docs/formats.md ("Coding-agent
sessions and trace-store exports") describes them, written against the raw lines without any
tracelab code: user messages (not what the harness injects), assistant messages with text,
tool calls, tool results, calls answered by a result, failed or denied calls, distinct tool
names, whether `output` is set (the run ends on the model's answer) and the first user message.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tracelab.store import Store, open_store

REAL = Path(__file__).resolve().parents[2] / ".." / "shared" / "real_traces" / "coding_agents"

pytestmark = pytest.mark.skipif(
    not REAL.is_dir(), reason=f"real coding-agent sessions not present at {REAL.resolve()}"
)


@dataclass(frozen=True)
class Counts:
    users: int
    assistants: int
    calls: int
    results: int
    paired: int
    failed: int
    tools: int
    has_output: bool
    first_user: str | None


def _pair(events: list[tuple[str, Any, Any, bool]]) -> tuple[int, int]:
    """Calls answered by a result, and those whose result failed, by docs/trace-format.md's
    pairing: a result takes the earliest unpaired call before it with its id, else with its
    name, else the earliest of them all. `events`: ``(call | result, id, name, failed)``."""
    open_calls: list[tuple[Any, Any]] = []
    paired = failed = 0
    for kind, call_id, name, bad in events:
        if kind == "call":
            open_calls.append((call_id or None, name))
            continue
        match = next((c for c in open_calls if call_id and c[0] == call_id), None) \
            or next((c for c in open_calls if name and c[1] == name), None) \
            or (open_calls[0] if open_calls else None)
        if match is not None:
            open_calls.remove(match)
            paired += 1
            failed += bad
    return paired, failed


def _lines(path: Path) -> Iterator[dict[str, Any]]:
    with open(path, encoding="utf-8") as fh:
        for raw in fh:
            if raw.strip():
                record = json.loads(raw)
                if isinstance(record, dict):
                    yield record


# -- Claude Code, read with plain json ---------------------------------------------------------

CC_INJECTED = ("<command-name>", "<command-message>", "<local-command-stdout>",
               "<local-command-caveat>", "[Request interrupted by user")


def _cc_text(content: Any) -> tuple[str | None, list[Any]]:
    if isinstance(content, str):
        return content, []
    blocks = [b for b in content or [] if isinstance(b, dict)]
    texts = [b["text"] for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str)]
    return ("\n".join(texts) if texts else None), blocks


def _cc_groups(folder: Path) -> dict[str, list[Path]]:
    """The files of each session of a project folder: a main file by its first sessionId, a
    sub-agent file by its parent's sessionId (`<session>/subagents/`: the folder's name)."""
    groups: dict[str, list[Path]] = {}
    for path in sorted(folder.glob("*.jsonl")) + sorted(folder.glob("*/subagents/*.jsonl")):
        if path.parent.name == "subagents":
            key = path.parent.parent.name
        else:
            key = next((r["sessionId"] for r in _lines(path) if isinstance(r.get("sessionId"), str)), None)
        if key is not None:
            groups.setdefault(key, []).append(path)
    return groups


def claude_code_counts(files: list[Path]) -> Counts:
    entries: list[dict[str, Any]] = []
    for path in files:
        entries += list(_lines(path))
    agents = {e["agentId"] for e in entries if e.get("isSidechain") and isinstance(e.get("agentId"), str)}
    copies = []
    for e in entries:  # a sub-agent without its own file: its entries as the progress lines copy them
        data = e.get("data") if e.get("type") == "progress" else None
        if isinstance(data, dict) and data.get("type") == "agent_progress" \
                and data.get("agentId") not in agents and isinstance(data.get("message"), dict):
            copies.append({**data["message"], "isSidechain": True})
    seen: set[str] = set()
    kept = []
    for e in sorted(entries + copies, key=lambda e: e.get("timestamp") or ""):
        uuid = e.get("uuid")
        if isinstance(uuid, str):
            if uuid in seen:
                continue
            seen.add(uuid)
        kept.append(e)
    users = assistants = results = 0
    call_ids: list[Any] = []
    names: set[str] = set()
    events: list[tuple[str, Any, Any, bool]] = []
    timeline: list[tuple[str, bool, str | None]] = []  # (kind, main chain, text)
    for e in kept:
        message = e.get("message") if isinstance(e.get("message"), dict) else {}
        main = not e.get("isSidechain")
        if e.get("type") == "user" and not e.get("isCompactSummary"):
            text, blocks = _cc_text(message.get("content"))
            for b in blocks:
                if b.get("type") == "tool_result":
                    results += 1
                    events.append(("result", b.get("tool_use_id"), None, b.get("is_error") is True))
                    timeline.append(("result", main, None))
            others = [b for b in blocks if b.get("type") != "tool_result"]
            if (text is not None or others) and not e.get("isMeta") \
                    and not (text or "").startswith(CC_INJECTED) and "<command-name>" not in (text or ""):
                users += 1
                timeline.append(("user", main, text))
        elif e.get("type") == "assistant" and not e.get("isApiErrorMessage"):
            text, blocks = _cc_text(message.get("content"))
            if text is not None and text.strip():
                assistants += 1
                timeline.append(("assistant", main, text))
            for b in blocks:
                if b.get("type") in ("tool_use", "server_tool_use"):
                    call_ids.append(b.get("id"))
                    names.add(b.get("name"))
                    events.append(("call", b.get("id"), b.get("name"), False))
                    timeline.append(("call", main, None))
    own = [t for t in timeline if t[1]]
    first_user = next((text for kind, _, text in own if kind == "user"), None)
    paired, failed = _pair(events)
    return Counts(users, assistants, len(call_ids), results, paired, failed, len(names),
                  bool(own) and own[-1][0] == "assistant", first_user)


# -- Codex CLI, read with plain json -----------------------------------------------------------

CODEX_INJECTED = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions",
                  "<turn_aborted>", "<subagent_notification>", "<skill>\n<name>")
EXIT = re.compile(r"^(?:Exit code: |Process exited with code )(-?\d+)$", re.MULTILINE)


def _codex_items(path: Path) -> Iterator[dict[str, Any]]:
    lines = list(_lines(path))
    legacy = bool(lines) and "type" not in lines[0] and "payload" not in lines[0]
    for line in lines[1:] if legacy else lines:
        if legacy and isinstance(line.get("type"), str):
            yield line
        elif line.get("type") == "response_item" and isinstance(line.get("payload"), dict):
            yield line["payload"]


def _codex_failed(output: Any, tool: str | None) -> bool:
    if isinstance(output, dict):
        return output.get("success") is False
    if not isinstance(output, str):
        return False
    if output.startswith("{"):
        try:
            wrapped = json.loads(output)
        except ValueError:
            wrapped = None
        if isinstance(wrapped, dict) and isinstance(wrapped.get("output"), str):
            code = (wrapped.get("metadata") or {}).get("exit_code")
            return isinstance(code, int) and code != 0
    if "rejected by user" in output:
        return True
    if tool == "apply_patch" and ("apply_patch verification failed" in output[:400]
                                  or "Failed to apply patch" in output[:400]):
        return True
    found = EXIT.search(output[:400])
    return bool(found) and int(found.group(1)) != 0


def codex_counts(path: Path) -> Counts:
    users = assistants = results = 0
    events: list[tuple[str, Any, Any, bool]] = []
    names: dict[Any, str] = {}
    tools: set[str] = set()
    calls = 0
    timeline: list[tuple[str, str | None]] = []
    for item in _codex_items(path):
        kind = item.get("type")
        if kind == "message":
            content = item.get("content")
            parts = content if isinstance(content, list) else [{"type": "text", "text": content}] \
                if isinstance(content, str) else []
            texts = [p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)
                     and p.get("type") in ("input_text", "output_text", "text")]
            others = [p for p in parts if not (isinstance(p, dict) and p.get("type") in (
                "input_text", "output_text", "text") and isinstance(p.get("text"), str))]
            if item.get("role") == "user":  # each text part Codex injected is not the user's
                own = [t for t in texts if not t.lstrip().startswith(CODEX_INJECTED)]
                if own or others or not texts:
                    users += 1
                    timeline.append(("user", "\n".join(own) if own else None))
                continue
            text = "\n".join(texts) if texts else None
            if item.get("role") == "assistant" and text is not None and text.strip():
                assistants += 1
                timeline.append(("assistant", text))
        elif isinstance(kind, str) and kind.endswith("_call"):
            calls += 1
            name = item.get("name") if kind in ("function_call", "custom_tool_call") else kind[:-5]
            name = "local_shell" if kind == "local_shell_call" else name
            tools.add(name)
            timeline.append(("call", None))
            events.append(("call", item.get("call_id"), name, False))
            if item.get("call_id") is not None:
                names[item["call_id"]] = name
            elif item.get("status") in ("completed", "failed", "incomplete"):
                results += 1
                events.append(("result", None, name, item["status"] != "completed"))
                timeline.append(("result", None))
        elif isinstance(kind, str) and kind.endswith("_output") and "call_id" in item:
            results += 1
            name = names.get(item["call_id"])
            events.append(("result", item["call_id"], name, _codex_failed(item.get("output"), name)))
            timeline.append(("result", None))
    first_user = next((text for k, text in timeline if k == "user"), None)
    paired, failed = _pair(events)
    return Counts(users, assistants, calls, results, paired, failed, len(tools),
                  bool(timeline) and timeline[-1][0] == "assistant", first_user)


# -- the store -------------------------------------------------------------------------------


def _expected() -> dict[str, Counts]:
    """Counts per session id, computed from the raw files."""
    expected: dict[str, Counts] = {}
    folders = {p.parent.parent.parent if p.parent.name == "subagents" else p.parent
               for p in (REAL / "claude-code").rglob("*.jsonl")}
    for folder in sorted(folders):
        for session, files in _cc_groups(folder).items():
            expected[session] = claude_code_counts(files)
    for path in sorted((REAL / "codex").rglob("*.jsonl")):
        first = next(_lines(path))
        session = first["payload"]["id"] if "payload" in first else first["id"]
        expected[session] = codex_counts(path)
    return expected


@pytest.fixture(scope="module")
def ingested(tmp_path_factory) -> Iterator[tuple[Store, Any]]:
    with open_store(tmp_path_factory.mktemp("coding") / "store.duckdb") as store:
        yield store, store.ingest([REAL], format="auto")


def _actual(store: Store) -> dict[str, Counts]:
    rows = store.sql("""
        SELECT e.episode_id,
               (SELECT count(*) FROM steps s WHERE s.episode_id = e.episode_id AND s.kind = 'user'),
               (SELECT count(*) FROM steps s WHERE s.episode_id = e.episode_id AND s.kind = 'assistant'
                   AND trim(coalesce(s.text, '')) <> ''),
               (SELECT count(*) FROM tool_calls c WHERE c.episode_id = e.episode_id),
               (SELECT count(*) FROM steps s WHERE s.episode_id = e.episode_id AND s.kind = 'tool_result'),
               (SELECT count(*) FROM tool_calls c WHERE c.episode_id = e.episode_id AND c.status <> 'missing'),
               (SELECT count(*) FROM tool_calls c WHERE c.episode_id = e.episode_id
                   AND c.status IN ('error', 'denied')),
               (SELECT count(DISTINCT c.tool_name) FROM tool_calls c WHERE c.episode_id = e.episode_id),
               coalesce(e.output, '') <> '', e.input
        FROM episodes e""").rows()
    return {row[0]: Counts(*row[1:]) for row in rows}


def test_every_session_is_stored_once_and_nothing_is_quarantined(ingested) -> None:
    store, report = ingested
    assert store.sql("SELECT source_uri, line, reason FROM quarantine").rows() == []
    assert sorted(_actual(store)) == sorted(_expected())
    readers = {f.path: f.format for f in report.files if f.status != "not-a-trace"}
    assert readers == {str(p): p.relative_to(REAL).parts[0] for p in REAL.rglob("*.jsonl")}


def test_counts_equal_the_raw_lines(ingested) -> None:
    store, _ = ingested
    actual, expected = _actual(store), _expected()
    differ = {s: (actual.get(s), counts) for s, counts in expected.items() if actual.get(s) != counts}
    assert differ == {}


def test_output_is_the_answer_when_a_session_ends_on_it(ingested) -> None:
    store, _ = ingested
    ends_on_answer = {s for s, c in _expected().items() if c.has_output}
    assert len(ends_on_answer) >= 20
    stored = {s for s, in store.sql("SELECT episode_id FROM episodes WHERE output <> ''").rows()}
    assert stored == ends_on_answer


def test_file_reports_name_the_record_types_not_read(ingested) -> None:
    store, report = ingested
    unread = {Path(f.path).name: f.unread for f in report.files if f.unread}
    assert unread == {"small.jsonl": {"world_state": 5, "inter_agent_communication_metadata": 1,
                                      "response_item:agent_message": 2}}
    [(stored,)] = store.sql("SELECT unread FROM sources WHERE unread IS NOT NULL").rows()
    assert json.loads(stored) == unread["small.jsonl"]
