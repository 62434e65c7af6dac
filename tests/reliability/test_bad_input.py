"""Bad input is never a crash: every line of a file lands as an episode, is skipped as a
duplicate, or is quarantined with a reason — lines = added + skipped + quarantined.

Covered elsewhere and listed in README "Guarantees": invalid UTF-8, BOM and CRLF, repeated
keys (tests/ingest/test_quarantine.py), a truncated gzip (tests/ingest/test_ingest.py).
"""
from __future__ import annotations

import gzip
import hashlib
import itertools
import json
from pathlib import Path

import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tracelab.formats.source as source
from tests.conftest import episode
from tests.reliability.support import (
    account,
    encode,
    json_values,
    mutated_bytes,
    nonblank_lines,
    tracelab,
)
from tracelab.native_keys import EPISODE_KEYS
from tracelab.store import open_store

KINDS = ["system", "user", "assistant", "error", "tool_call", "tool_result", "confirmation",
         "budget", "retrieval", "event"]
STEP_KEYS = ["kind", "name", "call_id", "text", "args", "result", "status", "is_error", "error",
             "effect", "ts", "duration_ms", "meta", "data", "steps_used", "tokens_used"]

# Records shaped like native episodes: a small pool of ids (so that identical and
# conflicting repeats happen), valid kinds mostly, and any JSON value in any field.
steps = st.lists(st.fixed_dictionaries(
    {"kind": st.sampled_from(KINDS) | json_values(3)},
    optional={key: json_values(4) | st.sampled_from(["t", "c1", "ok", "write", "2026-01-01T00:00:00Z"])
              for key in STEP_KEYS[1:]},
), max_size=5)
records = st.fixed_dictionaries(
    {"episode_id": st.sampled_from(["a", "b", "c"]) | json_values(2), "steps": steps | json_values(4)},
    optional={key: json_values(4) for key in sorted(EPISODE_KEYS - {"episode_id", "steps"})},
)
valid_records = st.builds(
    lambda eid, texts: episode(eid, *({"kind": "user", "text": t} for t in texts)),
    st.sampled_from(["a", "b", "c", "d"]), st.lists(st.sampled_from(["hi", "ok", "é"]), max_size=2),
)
lines = st.one_of(
    st.builds(encode, records, st.booleans()),
    st.builds(encode, valid_records, st.just(True)),
    st.builds(encode, json_values(), st.booleans()),
    st.builds(encode, valid_records, st.just(True)).flatmap(mutated_bytes),
    st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")),
    st.sampled_from([b"", b"   ", b"\r", b"\x00", b"{}", b"[]", b"null", b"{\"episode_id\": \"a\""]),
)


def test_any_file_of_records_lands_or_is_quarantined_line_by_line(tmp_path):
    examples = itertools.count()

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(body=st.lists(lines, max_size=12), bom=st.booleans(), crlf=st.booleans())
    def check(body: list[bytes], bom: bool, crlf: bool) -> None:
        n = next(examples)
        path = tmp_path / f"f{n}.jsonl"
        path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + (b"\r\n" if crlf else b"\n").join(body) + b"\n")

        with open_store(tmp_path / f"s{n}.duckdb") as store:
            [report] = store.ingest([path], format="native").files
            stored, held, reasons = account(store, path)

        expected = nonblank_lines(path.read_bytes())
        assert report.status == "loaded"
        assert report.added + report.skipped + report.quarantined == len(expected)
        assert (len(stored), len(held)) == (report.added, report.quarantined)
        assert set(stored).isdisjoint(held) and set(stored) | set(held) <= set(expected)
        assert all(reason and "\n" not in reason for reason in reasons)

    check()


def _ingest(tmp_path: Path, name: str, content: bytes, fmt: str = "native"):
    path = tmp_path / name
    path.write_bytes(content)
    with open_store(tmp_path / "store.duckdb") as store:
        [report] = store.ingest([path], format=fmt).files
        return report, store.sql("SELECT line, reason, raw FROM quarantine ORDER BY line").rows(), \
            store.sql("SELECT episode_id FROM episodes ORDER BY source_line")["episode_id"].to_list()


GOOD = json.dumps(episode("good", {"kind": "user", "text": "hi"})).encode()


def test_nul_bytes(tmp_path):
    raw_nul = b'{"episode_id": "raw\x00nul", "steps": []}'
    escaped = b'{"episode_id": "esc", "steps": [{"kind": "user", "text": "a\\u0000b"}]}'

    report, quarantined, ids = _ingest(tmp_path, "nul.jsonl", b"\n".join([GOOD, raw_nul, escaped]) + b"\n")

    assert (report.added, report.quarantined) == (2, 1)
    [(line, reason, raw)] = quarantined
    # char 19 is the NUL right after "raw"
    assert (line, reason) == (2, "invalid JSON: unexpected control character in string: line 1 column 20 "
                                 "(char 19)")
    assert raw == raw_nul.decode()
    assert ids == ["good", "esc"]
    with open_store(tmp_path / "store.duckdb") as store:
        assert store.sql("SELECT text FROM steps WHERE episode_id = 'esc'").item() == "a\x00b"


def test_empty_files(tmp_path):
    empty, _, _ = _ingest(tmp_path, "empty.jsonl", b"", fmt="auto")
    forced, _, _ = _ingest(tmp_path, "empty2.jsonl", b"")
    blank, _, _ = _ingest(tmp_path, "blank.jsonl.gz", gzip.compress(b"\n \r\n\t\n"))

    assert empty.status == "not-a-trace"
    assert empty.message.startswith(f"{tmp_path / 'empty.jsonl'}: no format claims this file (tried native, ")
    for report in (forced, blank):
        assert (report.status, report.added, report.skipped, report.quarantined) == ("loaded", 0, 0, 0)


def test_a_line_over_the_record_limit_is_quarantined_with_its_size_and_a_15_mb_line_lands(tmp_path, monkeypatch):
    # trace-format §6: records up to 256 MiB load (tests/ingest/test_bulk.py loads 40 MB and
    # quarantines a 600 MiB gzip bomb line); here the limit is lowered to keep the test small
    monkeypatch.setattr(source, "RECORD_LIMIT", 20 << 20)
    huge = json.dumps(episode("huge", {"kind": "assistant", "text": "y" * (50 << 20)})).encode()
    large = json.dumps(episode("large", {"kind": "tool_call", "name": "t", "args": {"q": "z" * (15 << 20)}}))

    report, quarantined, ids = _ingest(tmp_path, "big.jsonl", b"\n".join([GOOD, huge, large.encode()]))

    assert (report.added, report.quarantined) == (2, 1)
    [(line, reason, raw)] = quarantined
    assert (line, reason) == (2, f"the record is {len(huge):,} bytes of JSON; records over 20 MiB are "
                                 "not loaded")
    assert len(raw.encode()) == 64 * 1024 and raw.startswith('{"episode_id": "huge", "steps": [{"kind": "assistant"')
    assert ids == ["good", "large"]
    with open_store(tmp_path / "store.duckdb") as store:
        assert store.sql("SELECT strlen(args_text) FROM tool_calls").item() == len('{"q":""}') + (15 << 20)


def test_many_megabyte_records_in_one_file_all_land(tmp_path):
    # 40 records of 1 MB once went to DuckDB as one vector and ran it out of memory
    body = b"".join(json.dumps(episode(f"m{i}", {"kind": "user", "text": "m" * (1 << 20)})).encode() + b"\n"
                    for i in range(40))

    report, quarantined, ids = _ingest(tmp_path, "many.jsonl", body)

    assert (report.status, report.added, report.quarantined) == ("loaded", 40, 0)


def test_deep_nesting(tmp_path):
    def nested(eid: str, depth: int) -> bytes:
        args = '{"a": ' + "[" * depth + "]" * depth + "}"
        return f'{{"episode_id": "{eid}", "steps": [{{"kind": "tool_call", "name": "t", "args": {args}}}]}}'.encode()

    report, quarantined, ids = _ingest(tmp_path, "deep.jsonl", b"\n".join(
        [nested("d10000", 10_000), nested("d300", 300), nested("d200", 200), GOOD]))

    assert (report.added, report.quarantined) == (2, 2)
    assert [(line, reason) for line, reason, _ in quarantined] == [
        # orjson refuses the 1025th level: 84 characters of prefix, then the brackets
        (1, "invalid JSON: depth limit exceeded: line 1 column 1106 (char 1105)"),
        (2, "cannot be serialised: Recursion limit reached"),
    ]
    assert ids == ["d200", "good"]


def test_huge_numbers(tmp_path):
    lines = [b'{"episode_id": "inf", "reward": 1e400, "steps": []}',
             b'{"episode_id": "max", "reward": 1e308, "steps": []}',
             b'{"episode_id": "tiny", "reward": -1e-400, "steps": []}',
             b'{"episode_id": "int", "reward": 123456789012345678901234567890, "steps": ['
             b'{"kind": "tool_call", "name": "t", "args": {"n": -99999999999999999999999}}]}']

    report, quarantined, ids = _ingest(tmp_path, "numbers.jsonl", b"\n".join(lines))

    assert (report.added, report.quarantined) == (3, 1)
    assert [(line, reason) for line, reason, _ in quarantined] == [
        (1, "invalid JSON: number is infinity when parsed as double: line 1 column 33 (char 32)")]
    with open_store(tmp_path / "store.duckdb") as store:
        assert store.sql("SELECT episode_id, reward FROM episodes ORDER BY source_line").rows() == [
            ("max", 1e308), ("tiny", -0.0), ("int", 1.2345678901234568e29)]
        # JSON keeps integers beyond 64 bits in plain decimal (trace-format §5), and so does the hash
        assert store.sql("SELECT data::VARCHAR FROM steps WHERE episode_id = 'int'").rows() == [
            ('{"n":-99999999999999999999999}',)]
        assert store.sql("SELECT args::VARCHAR, args_text FROM tool_calls").rows() == [
            ('{"n":-99999999999999999999999}', '{"n":-99999999999999999999999}')]
        canonical = (b'{"episode_id":"int","reward":123456789012345678901234567890,"steps":['
                     b'{"args":{"n":-99999999999999999999999},"kind":"tool_call","name":"t"}]}')
        assert store.sql("SELECT content_hash FROM episodes WHERE episode_id = 'int'").rows() == [
            (hashlib.sha256(canonical).hexdigest(),)]


def test_integers_beyond_64_bits_in_json_string_args_keep_every_digit(tmp_path):
    line = (b'{"episode_id": "s", "steps": [{"kind": "tool_call", "name": "t", "call_id": "c", '
            b'"args": "{\\"n\\": 18446744073709551616}"}]}')

    report, quarantined, _ = _ingest(tmp_path, "args.jsonl", line)

    assert (report.added, quarantined) == (1, [])
    with open_store(tmp_path / "store.duckdb") as store:
        assert store.sql("SELECT args::VARCHAR, args_text FROM tool_calls").rows() == [
            ('{"n":18446744073709551616}', '{"n": 18446744073709551616}')]


@pytest.mark.parametrize("suffix", [".jsonl.gz", ".jsonl.zst"])
@pytest.mark.parametrize("cut", ["half", "last-bytes"])
def test_truncated_archives_load_nothing_and_exit_3(tmp_path, suffix, cut):
    # several 128 KiB zstd blocks: a cut file still decompresses in part, which must not load
    data = b"".join(json.dumps(episode(f"z{i}", {"kind": "user", "text": f"hello {i * 7919 % 100_003}"})).encode()
                    + b"\n" for i in range(20_000))
    packed = gzip.compress(data) if suffix.endswith(".gz") else zstandard.ZstdCompressor().compress(data)
    broken = tmp_path / f"broken{suffix}"
    broken.write_bytes(packed[: len(packed) // 2] if cut == "half" else packed[:-3])
    good = tmp_path / "good.jsonl"
    good.write_bytes(GOOD + b"\n")

    result = tracelab("ingest", str(broken), str(good), "--store", "s.duckdb", "-q", cwd=tmp_path)

    assert result.returncode == 3
    assert f"failed: {broken}: cannot be read to its end (" in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout.startswith("1 episode added, 0 skipped (already ingested), 0 quarantined")
    with open_store(tmp_path / "s.duckdb", read_only=True) as store:
        assert store.sql("SELECT episode_id FROM episodes").rows() == [("good",)]
        assert store.sql("SELECT source_uri FROM sources").rows() == [(str(good),)]
