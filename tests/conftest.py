"""Shared pytest configuration."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager

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


SIM_MODEL = "meta-llama/Llama-3.1-8B-Instruct"


@contextmanager
def _sim_serve(isl: int, osl: int, max_model_len: int) -> Iterator[str]:
    """`inferbench sim serve` (Llama-3.1-8B on an H100) on a free loopback port: its URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "inferbench.cli.main", "sim", "serve", "--port", "0",
         "--model", SIM_MODEL, "--gpu", "h100", "--isl", str(isl), "--osl", str(osl),
         "--max-model-len", str(max_model_len)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert "listening on" in line, line
    try:
        yield line.strip().rsplit(" ", 1)[-1]
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture
def sim_serve() -> Callable[[int, int, int], AbstractContextManager[str]]:
    """A simulator server to test a client against: `with sim_serve(isl, osl, mml) as url`."""
    return _sim_serve
