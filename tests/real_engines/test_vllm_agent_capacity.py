"""Agentic capacity on the real vLLM (CPU build, the tiny model): `inferbench capacity
--trace` replays a small coding-agent trace (tests/real_engines/fixtures/agent_trace.jsonl:
tool waits, a fork of subagents) as concurrent agent sessions, judges every turn against
per-turn targets as AgentPerf's tiers do, and answers in agents per GPU and per MW.

The targets are set from the search's own first measurement, so they bind between loads of
the grid whatever this machine's speed: the answer is checked against the verdicts the
search measured, not against a figure written here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .vllm_cpu import VllmServer

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TRACE = Path(__file__).parent / "fixtures" / "agent_trace.jsonl"


def _capacity(server: VllmServer, out: Path, slo: str) -> tuple[int, dict[str, object]]:
    ran = subprocess.run(
        [sys.executable, "-m", "inferbench.cli.main", "capacity", "--base-url", server.url,
         "--model", server.model, "--trace", str(TRACE), "--duration", "6",
         "--concurrency", "1,2,4,8", "--slo", slo, "--gpus", "1", "--gpu-kw", "1.5",
         "--repeats", "1", "--format", "json", "--output-dir", str(out)],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert ran.returncode in (0, 1), ran.stderr
    return ran.returncode, json.loads(ran.stdout)["measured"]


@pytest.mark.timeout(900)
def test_agent_sessions_on_real_vllm_per_gpu_and_mw(
    vllm_server: VllmServer, tmp_path: Path
) -> None:
    code, answer = _capacity(vllm_server, tmp_path / "loose", "ttft_p90<=60s")
    assert code == 0 and answer["unit"] == "agents"
    result = answer["result"]
    assert result["capacity"] == 8  # a minute per first token: every load meets it
    assert answer["users_per_gpu"] == 8
    assert answer["users_per_mw"] == pytest.approx(8 / (1.5 / 1000))
    point = json.loads(next((tmp_path / "loose").glob("*.json")).read_text())
    agentic = point["inferbench"]["agentic"]
    assert agentic["requests"] > 0 and agentic["trace_format"] == "jsonl"

    # An output speed no CPU reaches: the lowest load misses it (the search halves from the
    # middle of the grid, so it measures load 2, then 1), the answer is none (exit 1)
    # and the binding target is the per-turn output speed.
    slo = "ttft_p90<=60s,interactivity_p90>=100000"
    code, answer = _capacity(vllm_server, tmp_path / "tight", slo)
    assert code == 1
    result = answer["result"]
    assert result["capacity"] is None
    verdicts = result["verdicts"]
    assert 1 in [v["load"] for v in verdicts] and len(verdicts) <= 2  # of four loads
    assert all(v["valid"] for v in verdicts)  # measured, and missed on the target alone
    assert "interactivity" in result["binding"]
    print(json.dumps(result["verdicts"], indent=1)[:2000])
