"""`run` executes a job through the tree's own benchmark script, as InferenceX does.

The test tree's script (script_tree.py) follows InferenceX's conventions and starts
`inferbench sim serve` as its engine; `SIM_CMD` is the seam a real-engine test swaps.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from inferbench.launch.process import port_is_free

from .script_tree import SIM_CMD, write_tree

pytestmark = pytest.mark.integration


def _run(tree: Path, runs: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "inferbench.cli.main", "run", "--root", str(tree),
         "--runs-dir", str(runs)],
        capture_output=True, text=True, timeout=240, check=False,
    )  # fmt: skip


def _job_dir(runs: Path) -> Path:
    (run,) = [p for p in runs.iterdir() if p.is_dir()]
    (job,) = [p for p in run.iterdir() if p.is_dir()]
    return job


def test_run_goes_through_the_script_and_keeps_its_results(tmp_path: Path) -> None:
    tree, runs = tmp_path / "tree", tmp_path / "runs"
    write_tree(tree, SIM_CMD.replace("{python}", sys.executable))
    done = _run(tree, runs)
    assert done.returncode == 0, done.stdout + done.stderr
    job = _job_dir(runs)
    plan = json.loads((job / "plan.json").read_text())
    assert plan["script"]["script"] == "benchmarks/single_node/fixed_seq_len/llama_fp8_gpua.sh"
    outcome = json.loads((job / "outcome.json").read_text())
    assert outcome["status"] == "completed"
    assert [(p["concurrency"], p["status"]) for p in outcome["points"]] == [
        (2, "passed"),
        (4, "passed"),
    ]
    for conc in (2, 4):
        result = json.loads((job / "results" / f"conc{conc}.json").read_text())
        assert result["max_concurrency"] == conc
        assert result["completed"] == 2 * conc  # the script's --num-prompts $(( CONC * 2 ))
        assert "listening on" in (job / "logs" / f"server-conc{conc}.log").read_text()
        assert "run_benchmark_serving" in (job / "logs" / f"script-conc{conc}.log").read_text()
        port = int(plan["script"]["points"][0]["env"]["PORT"])
        assert port_is_free("127.0.0.1", port)  # the script's server went with its group


def test_a_script_whose_server_dies_is_a_recorded_failure(tmp_path: Path) -> None:
    tree, runs = tmp_path / "tree", tmp_path / "runs"
    write_tree(tree, "sh -c 'echo engine refused; exit 7'")
    done = _run(tree, runs)
    assert done.returncode == 1
    job = _job_dir(runs)
    outcome = json.loads((job / "outcome.json").read_text())
    assert outcome["status"] == "points_failed"
    for point in outcome["points"]:
        assert point["status"] == "failed"
        assert "exited with status 1 without a result file" in point["reason"]
    assert "engine refused" in (job / "logs" / "server-conc2.log").read_text()
    assert not (job / "results" / "conc2.json").exists()
