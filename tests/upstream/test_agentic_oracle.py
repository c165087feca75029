"""InferenceX's agentic post-processing, run from the upstream tree in its own venv, reads the
aiperf artifact files `inferbench replay --aiperf-artifacts` writes, with inferbench's numbers:
`process_agentic_result` (the agg_*.json), `validate_agentic_result` (the workflow's
failed-request gate) and `power_adapter.build_power_window` (the power window)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest

from agentic.recording_server import recording_server
from inferbench.bench.result import PointResult, read_point_result
from inferbench.cli.main import main

# 3 traces (one with a subagent), 2 lanes, 8 sessions: ~20 requests, one of them failed
TRACE = [
    {"session": "a", "input": 120, "output": 12},
    {"session": "a", "input": 30, "output": 6, "delay": 0.01},
    {"session": "a", "subagent": "x", "input": 40, "output": 5, "shared_prefix": 100},
    {"session": "a", "subagent": "x", "input": 9, "output": 3},
    {"session": "a", "input": 11, "output": 7},
    {"session": "b", "input": 60, "output": 9},
    {"session": "b", "input": 8, "output": 4},
    {"session": "c", "input": 200, "output": 16},
]
_ENV = {
    "RESULT_FILENAME": "agg_inferbench", "MODEL": "m", "MODEL_PREFIX": "m", "FRAMEWORK": "vllm",
    "PRECISION": "bf16", "TP": "1", "EP_SIZE": "1", "DP_ATTENTION": "false", "CONC": "2",
    "KV_OFFLOADING": "none", "RUNNER_TYPE": "h100", "IS_MULTINODE": "false",
}  # fmt: skip
_WINDOW = """
import json, sys
from pathlib import Path
from utils.agentic.aggregation.power_adapter import build_power_window
print(json.dumps(build_power_window(Path(sys.argv[1]))))
"""


def _oracle_env(tree: Path, tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE"))}
    env.update(_ENV)
    env.update(extra, PYTHONPATH=str(tree), PYTHONDONTWRITEBYTECODE="1")
    env["HF_HUB_CACHE"] = str(tmp_path / "no-hf-cache")  # no Weka trace metadata to look up
    return env


def _run(
    python: Path, args: list[str], env: dict[str, str], cwd: Path
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(python), *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=120
    )


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, PointResult]:
    """One replay against the recording loopback server (request 3 answered HTTP 500)."""
    tmp = tmp_path_factory.mktemp("agentic")
    trace = tmp / "trace.jsonl"
    trace.write_bytes(b"".join(orjson.dumps(row) + b"\n" for row in TRACE))
    results = tmp / "results"
    with recording_server(fail={3}, itl_s=0.001) as srv, pytest.raises(SystemExit) as info:
        main(["replay", "--base-url", srv.url, "--model", "m", "--trace", str(trace),
              "--concurrency", "2", "--sessions", "8", "--max-failure-rate", "0.2",
              "--output", str(results / "result.json"),
              "--aiperf-artifacts", str(results / "aiperf_artifacts")])  # fmt: skip
    assert info.value.code in (0, None)
    return results, read_point_result(results / "result.json")


def _agg(python: Path, tree: Path, results: Path, tmp_path: Path) -> dict[str, Any]:
    env = _oracle_env(tree, tmp_path, RESULT_DIR=str(results), AGENTIC_OUTPUT_DIR=str(tmp_path))
    done = _run(python, ["-m", "utils.agentic.aggregation.process_agentic_result"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    agg: dict[str, Any] = json.loads((tmp_path / "agg_inferbench.json").read_text())
    return agg


def _close(theirs: float, ours_ms: float) -> bool:
    # theirs: seconds rounded to 5 decimals by round_floats
    return abs(theirs - ours_ms / 1e3) <= 6e-6


@pytest.mark.integration
def test_process_agentic_result_reads_inferbenchs_numbers(
    replayed: tuple[Path, PointResult], inferencex_tree: Path, inferencex_python: Path,
    tmp_path: Path,
) -> None:  # fmt: skip
    results, ours = replayed
    sa, block = ours.sa, ours.inferbench.agentic
    assert block is not None and block.server is not None
    agg = _agg(inferencex_python, inferencex_tree, results, tmp_path)
    assert sa.failed == 1 and sa.completed >= 15
    assert agg["num_requests_successful"] == sa.completed
    assert agg["num_requests_total"] == sa.completed + sa.failed
    accounting = agg["request_accounting"]
    assert accounting["records_error_dropped"] == 1
    assert accounting["error_categories"] == {"http_status": 1}
    latency = agg["request_metrics"]["latency"]
    for theirs, mine in (("ttft", "ttft"), ("e2el", "e2el"), ("tpot", "tpot"), ("itl", "tpot")):
        # aiperf's ITL is per request, (E2EL - TTFT) / (output - 1): inferbench's TPOT
        stats = latency[theirs]
        assert _close(stats["mean"], getattr(sa, f"mean_{mine}_ms")), theirs
        assert _close(stats["p50"], getattr(sa, f"median_{mine}_ms")), theirs
        assert _close(stats["p90"], getattr(sa, f"p90_{mine}_ms")), theirs
        assert _close(stats["std"], getattr(sa, f"std_{mine}_ms")), theirs
    tokens = agg["server_metrics"]["tokens"]
    assert tokens["requests_completed"] == sa.completed
    assert tokens["prompt_total"] == sa.total_input_tokens
    assert tokens["generation_total"] == sa.total_output_tokens
    # throughput: theirs over first send .. last response of the successful requests,
    # inferbench's over its measured window, which holds that span (and a few ms more)
    throughput = agg["request_metrics"]["throughput"]
    span = throughput["duration_seconds"]
    assert 0 < span <= sa.duration + 1e-5 and span >= 0.9 * sa.duration
    total = sa.total_input_tokens + sa.total_output_tokens
    assert throughput["total"]["tokens_per_second"] == pytest.approx(total / span, rel=1e-4)
    assert throughput["output"]["tokens_per_second"] == pytest.approx(
        sa.output_throughput * sa.duration / span, rel=1e-4
    )
    per_gpu = throughput["per_gpu"]["total_tput_tps"]
    assert per_gpu == pytest.approx(throughput["total"]["tokens_per_second"], rel=1e-4)
    # cache hit rates: the server's counters over the window, and the workload's ceiling
    cache = agg["server_metrics"]["cache"]
    assert agg["server_metrics"]["adapter"] == "vllm" and agg["server_metrics"]["present"]
    assert cache["prefix_cache_hits"] == block.server.prefix_cache_hits
    assert cache["prefix_cache_queries"] == block.server.prefix_cache_queries
    assert cache["gpu_cache_hit_rate"] == pytest.approx(block.server.gpu_hit_rate, abs=1e-5)
    assert cache["overall_cache_hit_rate"] == pytest.approx(block.server.overall_hit_rate, abs=1e-5)
    theoretical = agg["request_metrics"]["cache"]["theoretical_cache_hit_rate"]
    assert theoretical == pytest.approx(block.client_reuse_share, abs=1e-5)
    assert 0 < theoretical < 1
    assert agg["dataset"]["loader"] == "inferbench:jsonl"
    assert "warnings" not in agg


@pytest.mark.integration
def test_validate_agentic_result_gates_on_inferbenchs_failed_requests(
    replayed: tuple[Path, PointResult], inferencex_tree: Path, inferencex_python: Path,
    tmp_path: Path,
) -> None:  # fmt: skip
    results, ours = replayed
    env = _oracle_env(inferencex_tree, tmp_path)
    module = ["-m", "utils.agentic.validation.validate_agentic_result"]
    artifacts = str(results / "aiperf_artifacts")
    ok = _run(inferencex_python, [*module, artifacts, "--failed-request-threshold", "0.10"],
              env, tmp_path)  # fmt: skip
    total = ours.sa.completed + ours.sa.failed
    assert ok.returncode == 0, ok.stderr
    assert f"1/{total} = " in ok.stdout
    strict = _run(inferencex_python, [*module, artifacts, "--failed-request-threshold", "0.01"],
                  env, tmp_path)  # fmt: skip
    assert strict.returncode == 1 and f"1/{total}" in strict.stderr


@pytest.mark.integration
def test_power_adapter_reads_inferbenchs_benchmark_window(
    replayed: tuple[Path, PointResult], inferencex_tree: Path, inferencex_python: Path,
    tmp_path: Path,
) -> None:  # fmt: skip
    results, ours = replayed
    env = _oracle_env(inferencex_tree, tmp_path)
    done = _run(inferencex_python, ["-c", _WINDOW, str(results)], env, tmp_path)
    assert done.returncode == 0, done.stderr
    window, reasons = json.loads(done.stdout)
    assert reasons == []  # no captured time zone needed: the times carry their offset
    sa = ours.sa
    assert window["benchmark_start_time_unix"] == pytest.approx(
        sa.benchmark_start_time_unix, abs=1e-6
    )
    assert window["benchmark_end_time_unix"] == pytest.approx(sa.benchmark_end_time_unix, abs=1e-6)
    assert window["completed"] == sa.completed
    assert window["total_input_tokens"] == sa.total_input_tokens
    assert window["total_output_tokens"] == sa.total_output_tokens
