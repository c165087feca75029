"""InferenceX's own sa-bench command line, taken from its launcher library, run unchanged by
`inferbench bench` against `sim serve`; InferenceX's `utils/process_result.py` reads the file.

The argument list is not retyped: bash expands the `benchmark_cmd=( ... )` block of
`run_benchmark_serving` in `benchmarks/benchmark_lib.sh` with the variables a launcher sets.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from .sa_bench_calls import sa_bench_argv

MODEL = "meta-llama/Llama-3.1-8B-Instruct"
CONC = 4
PROMPTS = 24


@pytest.fixture
def sim_url(sim_serve: Callable[[int, int, int], AbstractContextManager[str]]) -> Iterator[str]:
    with sim_serve(256, 32, 2048) as url:
        yield url


@pytest.mark.integration
def test_run_benchmark_serving_argv_runs_unchanged_and_process_result_reads_it(
    inferencex_tree: Path, inferencex_python: Path, sim_url: str, tmp_path: Path
) -> None:
    port = sim_url.rsplit(":", 1)[-1]
    argv = sa_bench_argv(
        inferencex_tree / "benchmarks" / "benchmark_lib.sh",
        {
            "model": MODEL,
            "port": port,
            "backend": "vllm",
            "endpoint": "",
            "input_len": "256",
            "output_len": "32",
            "random_range_ratio": "0.8",
            "num_prompts": str(PROMPTS),
            "max_concurrency": str(CONC),
            "result_filename": "dsr1_1k1k_fp8_vllm_tp1-ep1-dpafalse_conc4",
            "result_dir": str(tmp_path),
            "workspace_dir": str(inferencex_tree),
            "use_chat_template": "false",
            "dsv4": "false",
            "trust_remote_code": "true",
            "tokenizer": "",
            "tokenizer_mode": "",
        },
    )
    assert "--random-input-len" in argv and "--request-rate" in argv  # the real list
    bench = subprocess.run(
        [sys.executable, "-m", "inferbench.cli.main", "bench", *argv],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert bench.returncode == 0, bench.stderr
    result_file = tmp_path / "dsr1_1k1k_fp8_vllm_tp1-ep1-dpafalse_conc4.json"
    result = json.loads(result_file.read_text())
    assert result["completed"] == PROMPTS and result["failed"] == 0
    assert result["max_concurrency"] == CONC and result["request_rate"] == "inf"
    assert result["backend"] == "vllm" and result["model_id"] == MODEL
    assert result["request_goodput"] is None
    lens = result["input_lens"]
    assert min(lens) >= int(256 * 0.8) and max(lens) <= 256  # sa-bench's U[floor(L r), L]
    assert result["inferbench"]["warmups"] == 2 * CONC
    assert result["tokenizer_id"] == MODEL and result["best_of"] == 1  # sa-bench's defaults
    start, end = result["benchmark_start_time_unix"], result["benchmark_end_time_unix"]
    assert 0 < end - start == pytest.approx(result["duration"], abs=0.05)
    # a GPU power log as InferenceX's start_gpu_monitor writes it (nvidia-smi, local time,
    # one row per GPU per second) spanning the window: 2 GPUs at 300 W and 500 W
    (tmp_path / "gpu_metrics.csv").write_text(_nvidia_smi_log(start - 2, end + 2, (300, 500)))

    # InferenceX's own post-processing, from the upstream tree, in its own venv.
    env = {
        "PATH": os.environ.get("PATH", ""),
        "RUNNER_TYPE": "h100",
        "FRAMEWORK": "vllm",
        "PRECISION": "fp8",
        "SPEC_DECODING": "none",
        "RESULT_FILENAME": result_file.stem,  # relative to the working directory, as in CI
        "ISL": "256",
        "OSL": "32",
        "DISAGG": "false",
        "MODEL_PREFIX": "llama8b",
        "IMAGE": "vllm/vllm-openai:v0.11.0",
        "TP": "2",
        "EP_SIZE": "1",
        "DP_ATTENTION": "false",
        "REQUIRE_POWER": "1",  # fails unless the power step accepts the window and the log
    }
    proc = subprocess.run(
        [str(inferencex_python), str(inferencex_tree / "utils" / "process_result.py")],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    agg_file = tmp_path / f"agg_{result_file.stem}.json"
    assert agg_file.is_file(), proc.stderr
    agg = json.loads(agg_file.read_text())
    assert agg["conc"] == CONC and agg["model"] == MODEL
    assert agg["tput_per_gpu"] == pytest.approx(result["total_token_throughput"] / 2)
    assert agg["output_tput_per_gpu"] == pytest.approx(result["output_throughput"] / 2)
    for key in ("median_ttft", "p99_itl", "p99.9_e2el", "mean_tpot"):
        assert agg[key] == pytest.approx(result[f"{key}_ms"] / 1000)
    assert agg["median_intvty"] == pytest.approx(1000 / result["median_tpot_ms"])
    assert not re.search(r"Traceback", proc.stderr.split("[process_result]")[0])
    assert proc.returncode == 0, proc.stderr
    assert agg["power_valid"] == 1 and agg["avg_total_gpu_power_w"] == pytest.approx(800, rel=1e-3)
    energy = 800 * (end - start)
    assert agg["total_gpu_energy_j"] == pytest.approx(energy, rel=1e-3)


def _nvidia_smi_log(start: float, end: float, watts: tuple[int, ...]) -> str:
    """`nvidia-smi --query-gpu=<InferenceX's query> --format=csv -l 1`, local wall clock."""
    from datetime import datetime

    lines = [
        "timestamp, index, power.draw [W], temperature.gpu, clocks.current.sm [MHz],"
        " clocks.current.memory [MHz], utilization.gpu [%], utilization.memory [%]"
    ]
    t = start
    while t <= end + 1:
        stamp = datetime.fromtimestamp(t).strftime("%Y/%m/%d %H:%M:%S.%f")[:-3]
        for index, w in enumerate(watts):
            lines.append(f"{stamp}, {index}, {w:.2f} W, 50, 1980 MHz, 2619 MHz, 90 %, 40 %")
        t += 1.0
    return "\n".join(lines) + "\n"
