"""`inferbench eval` (lm-eval, GSM8K from a small local file) and `inferbench replay` (a
synthetic agentic trace) against the shared real vLLM server, prefix caching on.

The tiny model's answers are random tokens, so the eval's score is not checked, only that
lm-eval scored every question through vLLM's chat API. The replay must read vLLM's own
`/metrics` and find prefix-cache hits: a later turn resends its conversation's prefix.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from evals.conftest import needs_lm_eval
from evals.known_answers import QUESTIONS, write_dataset
from inferbench.evals.result import EvalStatus, read_eval_result

from .vllm_cpu import VllmServer

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def _cli(*args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "inferbench.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@needs_lm_eval
@pytest.mark.timeout(300)
def test_eval_scores_through_vllm(tmp_path: Path, vllm_server: VllmServer) -> None:
    data = write_dataset(tmp_path / "gsm8k.jsonl")
    done = _cli(
        "eval", "--base-url", vllm_server.url, "--model", vllm_server.model,
        "--dataset", str(data), "--limit", "4", "--concurrency", "4",
        "--context-length", "2048", "--output-dir", str(tmp_path / "out"),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    result = read_eval_result(tmp_path / "out" / "eval_gsm8k.json")
    assert result.status is EvalStatus.OK and not result.simulated
    assert result.primary is not None and result.primary.samples == min(4, len(QUESTIONS))
    assert 0.0 <= result.primary.value <= 1.0


@pytest.mark.timeout(300)
def test_replay_reads_vllm_prefix_cache_hits(tmp_path: Path, vllm_server: VllmServer) -> None:
    trace = tmp_path / "trace.jsonl"
    spec = "sessions=4,turns=3,first_input=256,input=64,output=16,delay=0,max_context=1500"
    done = _cli("traces", "synth", "-o", str(trace), "--spec", spec)
    assert done.returncode == 0, done.stderr
    result_file = tmp_path / "replay.json"
    done = _cli(
        "replay", "--base-url", vllm_server.url, "--model", vllm_server.model,
        "--trace", str(trace), "--concurrency", "2", "--sessions", "4",
        "--max-model-len", "2048", "--output", str(result_file),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(result_file.read_text())
    assert result["completed"] >= 4 and result["failed"] == 0
    server = result["inferbench"]["agentic"]["server"]
    assert server["engine"] == "vllm" and server["error"] is None, server
    assert server["prefix_cache_queries"] > 0
    assert 0 < server["prefix_cache_hits"] <= server["prefix_cache_queries"], server
    assert server["gpu_kv_usage"] is not None  # vLLM's KV gauge was read (0.0 when idle)
