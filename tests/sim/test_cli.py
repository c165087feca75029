"""`inferbench sim serve` as a subprocess (port discovery, SIGTERM, crash) and `sim estimate`."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from inferbench.cli.main import app, main

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
            "--output",
            str(out),
        ],
        standalone_mode=False,
    )
    result = json.loads(out.read_text())
    assert result["completed"] == 64 and result["max_concurrency"] == 32
    assert result["backend"] == "inferbench-sim"
    assert "2P1D DEP2/DEP8" in capsys.readouterr().out


def test_estimate_cli_refuses_a_bad_topology() -> None:
    from inferbench.core.errors import InputError

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


ALL_DEPLOYMENT_FLAGS = [
    "--job", "jobs.json:1", "--model", "m", "--gpu", "h100", "--model-spec", "spec",
    "--isl", "128", "--osl", "16", "--concurrency", "4x8", "--num-prompts", "10",
    "--catalog", "a.yaml", "--catalog", "b.yaml", "--precision", "fp8", "--tp", "2",
    "--dp", "3", "--pp", "4", "--expert-parallel", "--workers", "5", "--max-num-seqs", "6",
    "--max-num-batched-tokens", "7", "--max-model-len", "8", "--stream-interval", "9",
]  # fmt: skip


class _Stop(Exception):
    pass


def _options_of(monkeypatch: pytest.MonkeyPatch, command: str, *args: str) -> object:
    """The `DeploymentRequest` that `sim <command>` hands over, before anything runs."""
    from inferbench.cli import sim

    seen: list[object] = []

    def capture(opts: object, **_: object) -> None:  # serve also says serving=True
        seen.append(opts)
        raise _Stop

    monkeypatch.setattr(sim, "build_deployment", capture)
    with pytest.raises(_Stop):
        app(["sim", command, *args], standalone_mode=False)
    return seen[0]


@pytest.mark.parametrize("args", [[], ["--recipe", "r.yaml:0"], ALL_DEPLOYMENT_FLAGS])
def test_estimate_and_serve_build_the_same_deployment_options(
    monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    estimate = _options_of(monkeypatch, "estimate", *args)
    serve = _options_of(monkeypatch, "serve", *args)
    assert estimate == serve


def test_deployment_options_take_every_flag(monkeypatch: pytest.MonkeyPatch) -> None:
    from inferbench.sim.request import DeploymentRequest

    assert _options_of(monkeypatch, "estimate") == DeploymentRequest()
    assert _options_of(monkeypatch, "serve", *ALL_DEPLOYMENT_FLAGS) == DeploymentRequest(
        job="jobs.json:1", model="m", gpu="h100", model_spec="spec", isl=128, osl=16,
        concurrency="4x8", num_prompts=10, catalog=(Path("a.yaml"), Path("b.yaml")),
        precision="fp8", tp=2, dp=3, pp=4, expert_parallel=True, workers=5, max_num_seqs=6,
        max_num_batched_tokens=7, max_model_len=8, stream_interval=9,
    )  # fmt: skip


def test_estimate_and_serve_list_the_same_deployment_options() -> None:
    import typer

    from inferbench.sim.request import DeploymentRequest

    sim_group = typer.main.get_group(app).commands["sim"]

    def options(name: str) -> dict[str, tuple[object, str | None]]:
        params = sim_group.commands[name].params  # type: ignore[attr-defined]
        return {p.name or "": (p.default, getattr(p, "help", None)) for p in params}

    estimate, serve = options("estimate"), options("serve")
    shared = set(DeploymentRequest.model_fields)
    assert shared <= estimate.keys() and shared <= serve.keys()
    assert {k: estimate[k] for k in shared} == {k: serve[k] for k in shared}
    assert estimate["tp"] == (1, "Tensor parallel size (flags mode).")


def test_no_deployment_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("estimate", "serve"):
        capsys.readouterr()
        with pytest.raises(SystemExit) as exc:
            main(["sim", command, "--model", "m"])  # as the console script runs it
        err = capsys.readouterr().err
        assert exc.value.code == 2, err
        assert "no deployment given" in err and "Traceback" not in err
        assert err.strip().count("\n") == 0
