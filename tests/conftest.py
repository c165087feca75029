"""Shared pytest configuration."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session", autouse=True)
def _parse_cache_in_tmp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """inferbench's parse cache (and CLI subprocesses') writes under the session's tmp dir,
    never into the user's cache."""
    old = os.environ.get("INFERBENCH_CACHE_DIR")
    os.environ["INFERBENCH_CACHE_DIR"] = str(tmp_path_factory.mktemp("inferbench-cache"))
    yield
    if old is None:
        os.environ.pop("INFERBENCH_CACHE_DIR", None)
    else:
        os.environ["INFERBENCH_CACHE_DIR"] = old
