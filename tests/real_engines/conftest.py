"""Fixtures of the tests against a real vLLM (CPU build): its venv, the tiny model, and one
server shared by the tests that do not start their own.

Without a vLLM venv the tests skip with the reason; where CI=true (CI sets it, and
.ci/services/40-vllm.sh installs vLLM there) they fail instead, so a broken install cannot
pass CI by skipping them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import pytest

from harness.engine_grid import GridMeasurement, measure_grid, write_grid
from inferbench.results.store import open_store

from .vllm_cpu import (
    ENGINE_ARGS,
    TinyModel,
    VllmServer,
    VllmUnavailable,
    alive,
    grid_servers,
    listening,
    logged_pids,
    serve,
    server_env,
    tiny_grid,
    tiny_model,
    vllm_bin,
)

# the run helpers of the integration tests (a tree, the CLI in a subprocess, what it left)
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))

from runcli import no_live_servers

_HERE = Path(__file__).resolve().parent
# `inferbench run` options for the tiny model on vLLM's CPU build
ENGINE = ("--engine", "vllm", f"--engine-args={' '.join(ENGINE_ARGS)}")


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


@pytest.fixture(scope="session")
def tiny_grid_measurement(
    vllm_bin_dir: Path, tiny_llama: TinyModel, tmp_path_factory: pytest.TempPathFactory
) -> GridMeasurement:
    """The tiny model's batch-limit grid (vllm_cpu.tiny_grid: 4 servers x 5 concurrencies),
    measured once per session as if each server had its core alone (`GridSpec.alone`), for
    every test that checks something against the full grid. Also written to
    `grid.json` beside the servers' logs."""
    spec = tiny_grid(tiny_llama, alone=True)
    folder = tmp_path_factory.mktemp("vllm-grid")
    servers = grid_servers(vllm_bin_dir, tiny_llama, folder, max_model_len=spec.isl + spec.osl + 64)
    grid = GridMeasurement(spec=spec, points=tuple(measure_grid(spec, servers)))
    write_grid(folder / "grid.json", grid)
    return grid


@pytest.fixture
def vllm_environ(
    monkeypatch: pytest.MonkeyPatch, vllm_bin_dir: Path, tiny_llama: TinyModel
) -> Iterator[None]:
    """`vllm` on PATH, the model id resolvable offline, VLLM_CPU_KVCACHE_SPACE: set in this
    process's environment, which `inferbench run` and the servers it starts inherit."""
    for name, value in server_env(vllm_bin_dir, tiny_llama).items():
        monkeypatch.setenv(name, value)
    yield


def server_logs(run: Path) -> list[Path]:
    return sorted(run.glob("*/logs/server.log"))


def _ports(run: Path) -> set[int]:
    return {
        int(json.loads(plan.read_text())["processes"][0]["port"])
        for plan in run.glob("*/plan.json")
    }


def nothing_left(run: Path) -> None:
    """No process vLLM logged (API server, engine core, worker) is alive, none runs inside
    the run directory, and nothing listens on the ports the plans gave the servers."""
    pids = set().union(*(logged_pids(log) for log in server_logs(run)))
    assert pids, "vLLM logged no process ids"
    assert no_live_servers(run), "a process still runs inside the run directory"
    assert not [pid for pid in pids if alive(pid)], f"alive after the run: {pids}"
    assert not [port for port in _ports(run) if listening(port)]


def ingest(run: Path, db: Path) -> list[int]:
    """`inferbench results ingest RUN` into a SQLite file: the concurrencies stored."""
    url = f"sqlite:///{db}"
    done = subprocess.run(
        [sys.executable, "-m", "inferbench.cli.main", "results", "ingest", str(run), "--db", url],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    with open_store(url, create=False) as store:
        records = [stored.record for stored in store.query()]
    assert {r.identity.framework for r in records} == {"vllm"}
    assert all(r.metrics.completed > 0 and r.metrics.output_throughput > 0 for r in records)
    return sorted(r.identity.concurrency for r in records)
