"""`--db` takes a database URL or a SQLite file's path."""

from __future__ import annotations

from pathlib import Path

import pytest

from inferbench.results.dburl import store_url


@pytest.mark.parametrize(
    "given",
    [
        "sqlite:///runs/results.sqlite",
        "sqlite:////abs/r.sqlite",
        "postgresql+psycopg://bench@127.0.0.1/results",
        "sqlite://",  # a URL, refused by the store as in-memory: not a path
    ],
)
def test_a_url_is_itself(given: str) -> None:
    assert store_url(given) == given


def test_a_bare_path_is_a_sqlite_file() -> None:
    assert store_url("runs/results.sqlite") == "sqlite:///runs/results.sqlite"
    assert store_url("/tmp/x/r.db") == "sqlite:////tmp/x/r.db"
    assert store_url("~/r.sqlite") == f"sqlite:///{Path.home() / 'r.sqlite'}"
