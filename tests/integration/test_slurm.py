"""The slurm backend against a real one-node Slurm (`.ci/services/20-slurm.sh` starts it).

Skipped with a reason where `sinfo` does not answer.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from runcli import slurm_answers

from inferbench.core.status import JobStatus
from inferbench.launch.deployment import deployment_from_dicts
from inferbench.launch.plan import Engine, Plan, ProcessSpec
from inferbench.launch.planner import PlanOptions, slurm_plan
from inferbench.launch.rundir import JobDir
from inferbench.launch.site import SlurmSite
from inferbench.launch.slurm import SlurmExecutor, live_state
from services import needs_service

pytestmark = [
    pytest.mark.slurm,
    pytest.mark.integration,
    needs_service(not slurm_answers(), "no Slurm: sinfo does not answer"),
]
ENGINE_SERVER = str(Path(__file__).resolve().parents[1] / "launch" / "engine_server.py")
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _sim_job() -> dict[str, object]:
    return {
        "config-key": "llama3.1-8b-bf16-h200-vllm",
        "image": "vllm/vllm-openai:v0.10.2",
        "model": "meta-llama/Llama-3.1-8B-Instruct",
        "model-prefix": "llama3.1-8b",
        "precision": "bf16",
        "framework": "vllm",
        "runner": "h200",
        "isl": 128,
        "osl": 16,
        "tp": 1,
        "pp": 1,
        "dcp-size": 1,
        "pcp-size": 1,
        "ep": 1,
        "dp-attn": False,
        "conc": 2,
        "max-model-len": 400,
        "exp-name": "llama3.1-8b_128_16",
    }


def _plan_for(job_dir: JobDir, site: SlurmSite, argv: tuple[str, ...] | None = None) -> Plan:
    from inferbench.core.job import Job

    job = Job.model_validate(_sim_job())
    wire = job.to_wire()
    dep = deployment_from_dicts([wire, {**wire, "conc": 4}])
    job_dir.make()
    job_dir.job_json.write_text(json.dumps(wire))
    plan = slurm_plan(dep, site, str(job_dir.path), Engine.SIM, PlanOptions(max_prompts=4))
    if argv is not None:  # a stand-in server that misbehaves on purpose
        proc = ProcessSpec(
            name="engine", argv=argv, port=0, ready_pattern=plan.processes[0].ready_pattern
        )
        plan = plan.model_copy(update={"processes": (proc,)})
    job_dir.plan_json.write_text(plan.to_json())
    return plan


def _execute(plan: Plan, job_dir: JobDir, **kw: object) -> object:
    points: list[object] = []
    ids: list[str | None] = []
    result = SlurmExecutor(poll_s=0.5, **kw).execute(  # type: ignore[arg-type]
        plan, job_dir, plan.bench.points, points.append, ids.append
    )
    return result


@pytest.mark.slow
@pytest.mark.skipif(
    importlib.util.find_spec("inferbench.bench.api") is None,
    reason="the load generator (inferbench.bench.api) is not installed",
)
def test_sbatch_runs_the_simulator_and_the_bench_inside_the_allocation(tmp_path: Path) -> None:
    job_dir = JobDir(tmp_path / "job")
    plan = _plan_for(job_dir, SlurmSite())
    result = _execute(plan, job_dir)
    assert result.status is JobStatus.COMPLETED, (result.reason, result.log_tail)  # type: ignore[attr-defined]
    assert result.slurm_job_id  # type: ignore[attr-defined]
    for conc in (2, 4):
        data = json.loads(job_dir.result_file(conc).read_text())
        assert data["max_concurrency"] == conc and data["completed"] == 4
    assert (job_dir.path / "exit-status").read_text().strip() == "0"
    assert "listening on" in (job_dir.logs / "server.log").read_text()


def test_sbatch_refused_is_a_submit_failure(tmp_path: Path) -> None:
    job_dir = JobDir(tmp_path / "job")
    plan = _plan_for(job_dir, SlurmSite(partition="no-such-partition"))
    result = _execute(plan, job_dir)
    assert result.status is JobStatus.SUBMIT_FAILED  # type: ignore[attr-defined]
    assert "partition" in result.reason.lower()  # type: ignore[attr-defined]


@pytest.mark.slow
def test_cancelled_job_maps_to_cancelled(tmp_path: Path) -> None:
    job_dir = JobDir(tmp_path / "job")
    argv = (sys.executable, ENGINE_SERVER, "--port", "0", "--print-url", "--never-ready")
    plan = _plan_for(job_dir, SlurmSite(), argv)

    def cancel_when_running() -> None:
        id_file = job_dir.path / "slurm-job-id"
        for _ in range(200):
            if id_file.is_file() and live_state(id_file.read_text().strip()) == "RUNNING":
                subprocess.run(["scancel", id_file.read_text().strip()], check=False)
                return
            time.sleep(0.1)

    killer = threading.Thread(target=cancel_when_running)
    killer.start()
    result = _execute(plan, job_dir)
    killer.join()
    assert result.status is JobStatus.CANCELLED, result.reason  # type: ignore[attr-defined]
    assert "CANCELLED" in result.reason  # type: ignore[attr-defined]


@pytest.mark.slow
def test_timed_out_job_maps_to_timeout(tmp_path: Path) -> None:
    job_dir = JobDir(tmp_path / "job")
    argv = (sys.executable, ENGINE_SERVER, "--port", "0", "--print-url", "--never-ready")
    plan = _plan_for(job_dir, SlurmSite(time_limit="0:05"), argv)
    result = _execute(plan, job_dir)
    assert result.status is JobStatus.TIMEOUT, result.reason  # type: ignore[attr-defined]
    assert (job_dir.logs / "server.log").is_file()  # logs kept
