"""Every quarantine reason of trace-format §5: the bad record is kept with its line and reason,
the valid records of the same file still load."""
from __future__ import annotations

import json

import pytest

from tests.conftest import episode

GOOD = episode("good-1", {"kind": "user", "text": "hi"})


def quarantine_rows(store):
    return store.sql("SELECT line, reason, raw FROM quarantine ORDER BY line").rows()


@pytest.mark.parametrize(
    ("bad_line", "reason_part"),
    [
        ("{not json", "invalid JSON"),
        ('{"episode_id": "x", "steps": [], "reward": NaN}', "invalid JSON"),
        ("[1, 2]", "not a JSON object (a JSON array)"),
        ('"just a string"', "not a JSON object (a JSON string)"),
        ('{"steps": []}', "episode_id must be a non-empty string"),
        ('{"episode_id": "", "steps": []}', "episode_id must be a non-empty string"),
        ('{"episode_id": 7, "steps": []}', "episode_id must be a non-empty string"),
        ('{"episode_id": "x"}', "steps must be an array"),
        ('{"episode_id": "x", "steps": null}', "steps must be an array"),
        ('{"episode_id": "x", "steps": {"kind": "user"}}', "steps must be an array"),
        ('{"episode_id": "x", "steps": [{"text": "no kind"}]}', "steps[0]: missing kind"),
        ('{"episode_id": "x", "steps": [{"kind": "user"}, {"kind": "thought"}]}',
         'steps[1]: unknown kind "thought"'),
        ('{"episode_id": "x", "steps": ["user"]}', "steps[0]: a step must be an object"),
        ('{"episode_id": "x", "agent": 3, "steps": []}', "agent must be a string or null, not a number"),
        ('{"episode_id": "x", "tags": ["a", 1], "steps": []}', "tags must be an array of strings"),
        ('{"episode_id": "x", "reward": "high", "steps": []}', "reward must be a number"),
        ('{"episode_id": "x", "started_at": "yesterday", "steps": []}', "started_at must be an ISO-8601"),
        ('{"episode_id": "x", "principal": "u7", "steps": []}', "principal must be an object"),
        ('{"episode_id": "x", "meta": [1], "steps": []}', "meta must be an object"),
        ('{"episode_id": "x", "steps": [{"kind": "tool_result", "status": "maybe"}]}',
         'steps[0]: unknown status "maybe"'),
        ('{"episode_id": "x", "steps": [{"kind": "tool_call", "name": "a", "effect": "delete"}]}',
         'steps[0]: effect must be "read", "write" or null'),
        ('{"episode_id": "x", "tools": [{"name": "a", "effect": "rw"}], "steps": []}',
         'tools[0]: effect must be "read", "write" or null'),
        ('{"episode_id": "x", "tools": [{"description": "nameless"}], "steps": []}',
         "tools[0]: name must be a non-empty string"),
        ('{"episode_id": "x", "steps": [{"kind": "user", "text": 5}]}',
         "steps[0]: text must be a string or null"),
        ('{"episode_id": "x", "steps": [{"kind": "tool_call", "call_id": 5}]}',
         "steps[0]: call_id must be a string or null"),
        ('{"episode_id": "x", "steps": [{"kind": "user", "ts": "noon"}]}', "steps[0]: ts must be an ISO-8601"),
    ],
)
def test_bad_record_is_quarantined_and_the_rest_loads(store, write_jsonl, bad_line, reason_part):
    path = write_jsonl([GOOD, bad_line, episode("good-2")])

    report = store.ingest([path])

    assert (report.added, report.quarantined) == (2, 1)
    [(line, reason, raw)] = quarantine_rows(store)
    assert line == 2
    assert reason_part in reason
    assert raw is not None and raw != ""
    assert store.sql("SELECT episode_id FROM episodes ORDER BY 1")["episode_id"].to_list() == ["good-1", "good-2"]


def test_invalid_utf8_line_is_quarantined_with_its_line(store, tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(json.dumps(GOOD).encode() + b"\n" + b'{"episode_id": "\xff\xfe", "steps": []}\n')

    report = store.ingest([path])

    assert (report.added, report.quarantined) == (1, 1)
    [(line, reason, raw)] = quarantine_rows(store)
    assert (line, reason) == (2, "not valid UTF-8 (byte 16)")
    assert "\\xff" in raw


def test_line_numbers_count_blank_lines_crlf_and_bom(store, tmp_path):
    path = tmp_path / "crlf.jsonl"
    good = json.dumps(GOOD).encode()
    path.write_bytes(b"\xef\xbb\xbf" + good + b"\r\n\r\n   \r\n" + b"oops\r\n" + json.dumps(episode("e2")).encode())

    report = store.ingest([path])

    assert (report.added, report.quarantined) == (2, 1)
    assert [r[0] for r in quarantine_rows(store)] == [4]


def test_repeated_key_keeps_the_last_value(store, write_jsonl):
    path = write_jsonl(['{"episode_id": "dup", "agent": "first", "agent": "last", "steps": []}'])

    store.ingest([path])

    assert store.sql("SELECT agent FROM episodes").item() == "last"


def test_unlisted_keys_are_kept_under_meta_extra(store, write_jsonl):
    path = write_jsonl([episode("x", {"kind": "user", "text": "hi", "lang": "en"}, team="blue", meta={"region": "eu"})])

    store.ingest([path])

    assert json.loads(store.sql("SELECT meta FROM episodes").item()) == {"region": "eu", "extra": {"team": "blue"}}
    assert json.loads(store.sql("SELECT meta FROM steps").item()) == {"extra": {"lang": "en"}}


def test_json_array_file_positions_are_lines(store, tmp_path):
    path = tmp_path / "episodes.json"
    path.write_text(json.dumps([GOOD, {"episode_id": "x", "steps": "no"}, episode("e3")]))

    report = store.ingest([path])

    assert (report.added, report.quarantined) == (2, 1)
    assert [(r[0], r[1]) for r in quarantine_rows(store)] == [(2, "steps must be an array")]
