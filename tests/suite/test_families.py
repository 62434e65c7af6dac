"""The registry of assertion families (tracelab.suite.families) is complete and consistent."""
from __future__ import annotations

import pytest

from tests.conftest import REPO
from tracelab.engine.compile import SCHEMAS
from tracelab.sqlfiles import sql_dir
from tracelab.suite import load_suite
from tracelab.suite.families import FAMILIES, queries

SAMPLE = load_suite(REPO / "sample_traces" / "suite.yaml")
SAMPLE_ASSERTIONS = [a for case in SAMPLE.cases for a in case.assertions]


@pytest.mark.parametrize("kind", list(FAMILIES))
def test_each_family_reads_its_model_and_owns_its_tables(kind):
    family = FAMILIES[kind]
    loaded = [a for a in SAMPLE_ASSERTIONS if a.type == kind]
    assert loaded, f"sample_traces/suite.yaml has no {kind} assertion"
    assert all(type(a) is family.model for a in loaded)
    for table, columns in family.tables.items():
        assert list(SCHEMAS[table]) == list(columns)


@pytest.mark.parametrize("query", queries(), ids=lambda q: q.name)
def test_each_query_has_its_sql_file_and_parameter_table(query):
    assert (sql_dir() / "engine" / "assertions" / f"{query.name}.sql").is_file()
    assert query.table in SCHEMAS
    assert {column for column, _ in query.where} <= set(SCHEMAS[query.table])


def test_every_sql_assertion_file_is_a_query_or_a_shared_step():
    files = {p.stem for p in (sql_dir() / "engine" / "assertions").glob("*.sql")}
    shared = {name for name in files if name.startswith("_")}
    # args_valid.sql hands the calls to Python (JSON Schema), so it is not a verdict query
    assert files - shared - {q.name for q in queries()} == {"args_valid"}
