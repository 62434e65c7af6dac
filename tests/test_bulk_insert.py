"""Arrow columns built from their buffers (tracelab.bulk_insert): what pyarrow.array would build."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pyarrow as pa
import pytest

from tracelab.bulk_insert import arrow_column, arrow_table


@pytest.mark.parametrize(("values", "kind"), [
    ([1, None, -3, 2**40], pa.int64()),
    ([None, 7, 0], pa.int32()),
    (["a", None, "zé", ""], pa.string()),
    ([None, None], pa.string()),
    ([datetime(2026, 12, 1, 9, 30, 1, 250, tzinfo=timezone.utc), None,
      datetime(1969, 12, 31, 23, 0, tzinfo=timezone(timedelta(hours=-2)))], pa.timestamp("us", tz="UTC")),
])
def test_a_column_holds_what_pyarrow_array_would(values, kind):
    built = arrow_column(values, kind if kind == pa.int32() else None)
    assert built.type == kind
    assert built.to_pylist() == pa.array(values, kind).to_pylist()
    assert built.null_count == values.count(None)


def test_utf8_bytes_are_taken_as_text_and_a_table_keeps_its_names():
    table = arrow_table({"doc": [b'{"a":1}', None], "n": range(2), "ready": arrow_column([5, 6], pa.int32())})
    assert table.column_names == ["doc", "n", "ready"]
    assert table.to_pylist() == [{"doc": '{"a":1}', "n": 0, "ready": 5}, {"doc": None, "n": 1, "ready": 6}]
    assert table.schema.field("ready").type == pa.int32()


def test_values_of_another_type_are_refused():
    with pytest.raises(TypeError):
        arrow_column([1, "two"])
    with pytest.raises(TypeError):
        arrow_column([1.5], pa.float64())
