"""`inferbench capacity`: predicted for a job, measured on a real HTTP server."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from inferbench.cli.main import main

MODEL = "meta-llama/Llama-3.1-8B-Instruct"


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    try:
        main(args)
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out = capsys.readouterr()
    return code, out.out, out.err


def test_predicted_capacity_of_a_job_per_gpu_and_per_mw(
    job_file: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["capacity", "--job", job_file, "--slo", "ttft_p90<=1s,tpot_p90<=20ms"]
    code, out, err = _run([*args, "--gpu-kw", "1.5", "--format", "json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["schema"] == "inferbench.capacity/1" and doc["measured"] is None
    answer = doc["predicted"]
    capacity = answer["result"]["capacity"]
    assert capacity in answer["result"]["grid"] and answer["gpus"] == 1
    assert answer["users_per_gpu"] == capacity
    assert answer["users_per_mw"] == pytest.approx(capacity / 0.0015)
    assert answer["tok_s_per_gpu"] > 0
    code, text, _ = _run(args, capsys)
    assert code == 0 and text.startswith("predicted capacity within ttft_p90<=1000 ms")


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--slo", "ttft_p90<=1s"], "nothing to search"),
        (["--slo", "ttft<=1s", "--job", "x.json:0"], "is not a target"),
        (["--slo", "ttft_p90<=1s", "--base-url", "http://127.0.0.1:9"], "--base-url needs --model"),
        (["--slo", "ttft_p90<=1s", "--job", "x:0", "--concurrency", "4,0"], "--concurrency"),
        (["--slo", "ttft_p90<=1s", "--job", "x:0", "--repeats", "0"], "--repeats"),
    ],
)
def test_bad_input_is_named(args: list[str], says: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(["capacity", *args], capsys)
    assert code == 2 and says in err and "Traceback" not in err, err


def test_unmet_targets_exit_1(job_file: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(["capacity", "--job", job_file, "--slo", "ttft_p90<=1ms"], capsys)
    assert code == 1 and "none: the lowest load 1 missed a target" in out


@pytest.mark.integration
def test_measured_capacity_on_a_server_matches_its_grid(tmp_path: Path) -> None:
    """`sim serve` is the server (real HTTP, real time); the grid is measured in full by the
    same client and must agree with the search, which measures at most half of it."""
    serve = [sys.executable, "-m", "inferbench.cli.main", "sim", "serve", "--port", "0"]
    serve += ["--model", MODEL, "--gpu", "h100", "--isl", "64", "--osl", "16"]
    proc = subprocess.Popen(serve, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip().rsplit(" ", 1)[-1]
        common = ["--base-url", url, "--model", MODEL, "--isl", "64", "--osl", "16"]
        common += ["--prompts-per-load", "4", "--concurrency", "1,2,4,8,16,32,64,128,256"]
        # a TTFT target the queueing of a 256-stream wave breaks, and 16 streams do not
        slo = ["--slo", "ttft_p90<=2s"]
        ran = subprocess.run(
            [sys.executable, "-m", "inferbench.cli.main", "capacity", *common, *slo,
             "--format", "json", "--output-dir", str(tmp_path / "points")],
            capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert ran.returncode in (0, 1), ran.stderr
        result = json.loads(ran.stdout)["measured"]["result"]
        files = sorted(p.name for p in (tmp_path / "points").iterdir())
        assert len({f.split("_")[0] for f in files}) == result_loads(result) <= 4  # of 9
        verdicts = {v["load"]: v for v in result["verdicts"]}
        cap = result["capacity"]
        assert cap is None or verdicts[cap]["checks"][0]["met"]
        if result["first_failing"] is not None:
            assert not verdicts[result["first_failing"]]["checks"][0]["met"]
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def result_loads(result: dict[str, object]) -> int:
    return len(result["verdicts"])  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def agentic_job(tmp_path_factory: pytest.TempPathFactory) -> str:
    out = tmp_path_factory.mktemp("agentic") / "jobs.json"
    args = ["sweep", "--root", str(Path(__file__).resolve().parents[2] / "examples")]
    with pytest.raises(SystemExit) as done:
        main([*args, "--scenario-type", "agentic-coding", "--format", "json", "-o", str(out)])
    assert done.value.code == 0
    return f"{out}:0"


def test_agentic_capacity_is_in_agent_sessions_per_gpu_and_mw(
    agentic_job: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["capacity", "--job", agentic_job, "--synth", "sessions=16,seed=1", "--duration", "60"]
    args += ["--slo", "ttft_p90<=2s,interactivity_p90>=30", "--concurrency", "1,4,16,64"]
    code, out, err = _run([*args, "--format", "json", "--output-dir", str(tmp_path)], capsys)
    assert code in (0, 1), err
    answer = json.loads(out)["predicted"]
    assert answer["unit"] == "agents" and answer["kw_per_gpu"] == 1.73  # the catalog's H200
    files = sorted(p.name for p in tmp_path.glob("predicted_*.json"))
    loads = [v["load"] for v in answer["result"]["verdicts"]]
    assert files == sorted(f"predicted_conc{c}.json" for c in loads)
    result = json.loads((tmp_path / files[0]).read_text())
    assert result["inferbench"]["agentic"]["trace_format"] == "synth"
    if answer["result"]["capacity"] is not None:
        code, text, _ = _run(args, capsys)
        assert "agent sessions" in text and "agents/GPU" in text and "agents/MW" in text


@pytest.mark.integration
def test_agentic_capacity_measured_by_replay_on_a_server(tmp_path: Path) -> None:
    serve = [sys.executable, "-m", "inferbench.cli.main", "sim", "serve", "--port", "0"]
    serve += ["--model", MODEL, "--gpu", "h100", "--max-model-len", "8192"]
    proc = subprocess.Popen(serve, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip().rsplit(" ", 1)[-1]
        ran = subprocess.run(
            [sys.executable, "-m", "inferbench.cli.main", "capacity", "--base-url", url,
             "--model", MODEL, "--synth", "sessions=8,turns=2,seed=3", "--duration", "4",
             "--slo", "ttft_p90<=30s", "--concurrency", "1,2,4", "--format", "json",
             "--output-dir", str(tmp_path)],
            capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert ran.returncode in (0, 1), ran.stderr
        answer = json.loads(ran.stdout)["measured"]
        assert answer["unit"] == "agents"
        verdicts = answer["result"]["verdicts"]
        assert 1 <= len(verdicts) <= 2  # of three loads
        first = json.loads(next(tmp_path.iterdir()).read_text())
        assert first["inferbench"]["agentic"]["requests"] > 0
    finally:
        proc.terminate()
        proc.wait(timeout=30)
