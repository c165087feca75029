"""`inferbench sim serve` as a subprocess (port discovery, SIGTERM, crash) and `sim estimate`."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from inferbench.cli.main import app

from .conftest import SEED_RECIPE

SMALL = [
    "--model",
    "meta-llama/Llama-3.1-8B-Instruct",
    "--gpu",
    "h100",
    "--isl",
    "128",
    "--osl",
    "16",
    "--max-model-len",
    "1024",
]


def _start(*args: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "inferbench.cli.main", "sim", "serve", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("inferbench sim: listening on http://127.0.0.1:"), line
    return proc, line.strip().rsplit(" ", 1)[-1]


def _post(url: str, body: dict[str, object]) -> dict[str, object]:
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=10) as resp:
        result: dict[str, object] = json.loads(resp.read())
        return result


@pytest.mark.integration
def test_serve_prints_port_and_stops_on_sigterm(tmp_path: Path) -> None:
    sends = tmp_path / "sends.jsonl"
    proc, url = _start(*SMALL, "--record-sends", str(sends))
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=5) as resp:
            assert resp.status == 200
        body = _post(
            f"{url}/v1/completions", {"prompt": [1, 2, 3], "max_tokens": 4, "stream": True}
        )
    except json.JSONDecodeError:
        body = {}
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    assert body == {} and sends.exists()  # the stream is SSE, not JSON; the sends were written
    assert len(sends.read_text().splitlines()) == 4


@pytest.mark.integration
def test_serve_seed_recipe_with_no_other_flag() -> None:
    proc, url = _start("--recipe", str(SEED_RECIPE))
    try:
        with urllib.request.urlopen(f"{url}/v1/models", timeout=5) as resp:
            models = json.loads(resp.read())
        assert models["data"][0]["id"] == "nvidia/MiniMax-M3-NVFP4"
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0


@pytest.mark.integration
def test_crash_after_exits_the_process() -> None:
    proc, url = _start(*SMALL, "--crash-after", "1")
    _post(f"{url}/v1/completions", {"prompt": [1, 2, 3], "max_tokens": 2})
    assert proc.wait(timeout=10) != 0
    assert proc.stderr is not None and "--crash-after" in proc.stderr.read()


def test_estimate_cli_writes_result(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.json"
    app(
        [
            "sim",
            "estimate",
            "--recipe",
            str(SEED_RECIPE),
            "--concurrency",
            "32",
            "--num-prompts",
            "64",
            "--result-file",
            str(out),
        ],
        standalone_mode=False,
    )
    result = json.loads(out.read_text())
    assert result["completed"] == 64 and result["max_concurrency"] == 32
    assert result["backend"] == "inferbench-sim"
    assert "2P1D DEP2/DEP8" in capsys.readouterr().out


def test_estimate_cli_refuses_a_bad_topology() -> None:
    from inferbench.errors import InputError

    with pytest.raises(InputError, match="does not divide"):
        app(["sim", "estimate", *SMALL, "--tp", "3"], standalone_mode=False)


@pytest.mark.slow
def test_sweep_topologies_prints_a_pareto(capsys: pytest.CaptureFixture[str]) -> None:
    app(
        ["sim", "estimate", *SMALL, "--sweep-topologies", "--gpu-budget", "2"],
        standalone_mode=False,
    )
    out = capsys.readouterr().out
    assert "pareto" in out and "*" in out
