"""Script parity on the real engine: a tree whose benchmark script follows InferenceX's
conventions (runner launcher, benchmark_lib.sh, `vllm serve` in the background, health wait,
run_benchmark_serving) starts the real vLLM, and `inferbench run` measures through it."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from inferbench.launch.process import port_is_free

from .vllm_cpu import ENGINE_ARGS, TinyModel, alive, logged_pids

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "launch"))

from script_tree import VLLM_CMD, write_tree

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def _gone(pids: set[int], within_s: float = 15.0) -> bool:
    """Every pid has exited (a killed engine core may take a moment to be reaped)."""
    deadline = time.monotonic() + within_s
    while [pid for pid in pids if alive(pid)]:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


@pytest.mark.timeout(600)
def test_run_through_the_trees_script_starts_the_real_vllm(
    tmp_path: Path, tiny_llama: TinyModel, vllm_environ: None
) -> None:
    tree, runs = tmp_path / "tree", tmp_path / "runs"
    # the script's own command line, on loopback, with the CPU build's one extra flag
    command = VLLM_CMD.replace("--host 0.0.0.0", "--host 127.0.0.1")
    write_tree(tree, f"{command} {' '.join(ENGINE_ARGS)}")
    master = tree / "configs" / "nvidia-master.yaml"
    master.write_text(
        master.read_text().replace("meta-llama/Llama-3.1-8B-Instruct", tiny_llama.model_id)
    )
    done = subprocess.run(
        [sys.executable, "-m", "inferbench.cli.main", "run", "--root", str(tree),
         "--runs-dir", str(runs)],
        capture_output=True, text=True, timeout=580, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    (run,) = [p for p in runs.iterdir() if p.is_dir()]
    (job,) = [p for p in run.iterdir() if p.is_dir() and (p / "plan.json").is_file()]
    plan = json.loads((job / "plan.json").read_text())
    assert plan["script"]["script"] == "benchmarks/single_node/fixed_seq_len/llama_fp8_gpua.sh"
    for conc in (2, 4):
        result = json.loads((job / "results" / f"conc{conc}.json").read_text())
        assert result["completed"] == 2 * conc and result["failed"] == 0
        assert result["model_id"] == tiny_llama.model_id
        pids = logged_pids(job / "logs" / f"server-conc{conc}.log")
        assert pids and _gone(pids), pids  # the server went with the script's group
    port = int(plan["script"]["points"][0]["env"]["PORT"])
    assert port_is_free("127.0.0.1", port)
