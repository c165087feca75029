"""Fixtures for the results tests: databases (SQLite always, PostgreSQL when
INFERBENCH_TEST_PG_URL is set) and hand-written result files matching the contracts."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from services import missing_service

PG_URL = os.environ.get("INFERBENCH_TEST_PG_URL")
PG_SKIP = "INFERBENCH_TEST_PG_URL is not set (.ci/services/10-postgres.sh starts a server)"


def reset_postgres(url: str) -> None:
    """Drop every table the store's migrations create (the test database is shared)."""
    from inferbench.results.migrations import metadata

    names = ", ".join(table.name for table in metadata.sorted_tables)
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text(f"DROP TABLE IF EXISTS {names} CASCADE"))
    engine.dispose()


@pytest.fixture(
    params=[
        "sqlite",
        pytest.param("postgresql", marks=[pytest.mark.postgres, pytest.mark.integration]),
    ]
)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The same store tests run on SQLite and on a real PostgreSQL."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'results.sqlite'}"
        return
    if not PG_URL:
        missing_service(PG_SKIP)
    reset_postgres(PG_URL)
    yield PG_URL
    reset_postgres(PG_URL)
