"""Fixtures of the tests against a real vLLM (CPU build): its venv, the tiny model, and one
server shared by the tests that do not start their own.

Without a vLLM venv the tests skip with the reason; where CI=true (CI sets it, and
.ci/services/40-vllm.sh installs vLLM there) they fail instead, so a broken install cannot
pass CI by skipping them.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import pytest

from .vllm_cpu import TinyModel, VllmServer, VllmUnavailable, serve, tiny_model, vllm_bin

# the run helpers of the integration tests (a tree, the CLI in a subprocess, what it left)
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))

_HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.vllm)


def _unavailable(reason: str) -> NoReturn:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI=true: the vllm tests must run there)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def vllm_bin_dir() -> Path:
    """The vLLM venv's bin folder (`vllm`, `python`)."""
    try:
        return vllm_bin()
    except VllmUnavailable as exc:
        _unavailable(str(exc))


@pytest.fixture(scope="session")
def tiny_llama(vllm_bin_dir: Path) -> TinyModel:
    """The tiny random Llama (tools/tiny_model.py), built once into the cache."""
    try:
        return tiny_model(vllm_bin_dir)
    except VllmUnavailable as exc:
        _unavailable(str(exc))


@pytest.fixture(scope="session")
def vllm_server(
    vllm_bin_dir: Path, tiny_llama: TinyModel, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[VllmServer]:
    """One `vllm serve` of the tiny model, prefix caching on, for the tests that only send
    requests; it stops when the session ends."""
    log = tmp_path_factory.mktemp("vllm-server") / "server.log"
    args = ("--max-model-len", "2048", "--max-num-seqs", "16", "--enable-prefix-caching")
    with serve(vllm_bin_dir, tiny_llama, log, *args) as server:
        yield server
