"""Agentic capacity of an AgentX job of the real tree, predicted on the simulator: agent
sessions within per-turn targets, per GPU and per provisioned MW. The job's Weka traces are
not on this machine, so the sessions are synthetic (`--synth`), as `sim estimate` does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inferbench.cli.main import main


def test_an_agentx_job_of_the_real_tree_has_an_agent_capacity(
    inferencex_tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    jobs = tmp_path / "jobs.json"
    with pytest.raises(SystemExit) as done:
        main(["sweep", "--root", str(inferencex_tree), "--scenario-type", "agentic-coding",
              "--format", "json", "--output", str(jobs)])  # fmt: skip
    assert done.value.code == 0
    job = json.loads(jobs.read_text())[0]
    capsys.readouterr()
    with pytest.raises(SystemExit) as done:
        main(["capacity", "--job", f"{jobs}:0", "--synth", "sessions=16,seed=1",
              "--duration", "60", "--slo", "ttft_p90<=2s,interactivity_p90>=20",
              "--concurrency", "1,4,16,64", "--format", "json"])  # fmt: skip
    assert done.value.code in (0, 1)
    answer = json.loads(capsys.readouterr().out)["predicted"]
    assert answer["unit"] == "agents" and len(answer["result"]["verdicts"]) <= 3
    assert answer["kw_per_gpu"] is not None  # the catalog's constant for the job's GPU
    if answer["result"]["capacity"] is not None:
        assert answer["users_per_mw"] == pytest.approx(
            answer["result"]["capacity"] / (answer["gpus"] * answer["kw_per_gpu"] / 1000)
        )
    assert job["model-prefix"]  # an AgentX entry of the tree, swept as InferenceX sweeps it
