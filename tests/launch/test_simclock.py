"""`inferbench run --engine sim` on the simulator's virtual clock: whole curves in seconds, the
job directory of a measured run, the run state, stop and resume point by point; real-time
serving on request (`--sim-realtime`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from inferbench.bench.result import read_point_result
from inferbench.config.project import load_project
from inferbench.core.errors import InputError
from inferbench.core.outcome import PointOutcome
from inferbench.launch.deployment import Deployment
from inferbench.launch.plan import Engine, Plan
from inferbench.launch.planner import PlanOptions
from inferbench.launch.resume import load_saved_run, refuse_conflicts
from inferbench.launch.runner import RunEvents, RunSummary, execute_run
from inferbench.launch.session import RunOptions, build_request
from inferbench.launch.simclock import JobSimulator, OpenJob, SimulatedPoint
from inferbench.launch.state import RunState
from inferbench.launch.stop import StopRequest
from inferbench.launch.sweep import load_deployments
from inferbench.matrix.filters import SweepFilters
from inferbench.results.ingest import ingest_paths
from inferbench.results.store import open_store
from inferbench.sim.points import open_job

_MASTER = """\
llama3.1-8b-bf16-h200-vllm:
  image: vllm/vllm-openai:v0.10.2
  model: {model}
  model-prefix: llama3.1-8b
  runner: h200
  precision: bf16
  framework: vllm
  multinode: false
  scenarios:
    fixed-seq-len:
      - isl: 1024
        osl: {osl}
        search-space:
          - {{tp: 1, conc-list: [4, 8, 16]}}
"""
_RUNNERS = """\
labels:
  h200: [h200-nv_0]
hardware:
  h200: {gpus-per-node: 8, available-cpu-dram-mib: 1900000}
"""
CONCS = (4, 8, 16)


def _tree(root: Path, osl: int = 1024, model: str = "meta-llama/Llama-3.1-8B-Instruct") -> Path:
    (root / "configs").mkdir(parents=True)
    (root / "configs" / "nvidia-master.yaml").write_text(_MASTER.format(osl=osl, model=model))
    (root / "configs" / "runners.yaml").write_text(_RUNNERS)
    (root / "perf-changelog.yaml").write_text("[]\n")
    return root


def _cli(cwd: Path, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "inferbench.cli.main", "run", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "COLUMNS": "200"},
    )


def _job_dir(runs: Path) -> Path:
    (job,) = [p for p in runs.glob("*/*") if (p / "job.json").is_file()]
    return job


def _done_lines(job: Path) -> list[str]:
    return [
        x for x in (job / "logs" / "client.log").read_text().splitlines() if x.startswith("done")
    ]


def test_run_engine_sim_draws_a_curve_on_the_virtual_clock(tmp_path: Path) -> None:
    """Three 1k1k points of 10 x conc requests each: hundreds of simulated seconds, which a
    real-time server takes as long to serve; the virtual clock gives them in seconds, in the
    measured job directory layout, and `results ingest` stores them as simulated points."""
    tree, runs = _tree(tmp_path / "tree"), tmp_path / "runs"
    started = time.monotonic()
    done = _cli(
        tmp_path, "--root", str(tree), "--engine", "sim", "--runs-dir", str(runs), timeout=90
    )
    wall = time.monotonic() - started
    assert done.returncode == 0, done.stdout + done.stderr
    job = _job_dir(runs)
    simulated = 0.0
    for conc in CONCS:
        result = read_point_result(job / "results" / f"conc{conc}.json")  # the bench's format
        assert result.sa.max_concurrency == conc and result.sa.completed == 10 * conc
        assert result.inferbench.endpoint.base_url == "sim://virtual-clock"
        simulated += result.sa.duration
        note = (job / "results" / f"power_conc{conc}.unavailable").read_text()
        assert "simulated" in note
    assert simulated > 5 * wall, (simulated, wall)  # the simulator's timeline, not wall time
    for name in ("job.json", "plan.json", "env.json", "outcome.json", "logs/server.log"):
        assert (job / name).is_file(), name
    plan = Plan.model_validate_json((job / "plan.json").read_text())
    assert plan.engine is Engine.SIM and any("virtual clock" in n for n in plan.notes)
    outcome = json.loads((job / "outcome.json").read_text())
    assert outcome["status"] == "completed" and outcome["engine"] == "sim"
    assert [p["concurrency"] for p in outcome["points"]] == list(CONCS)
    assert len(_done_lines(job)) == 3
    state = RunState.model_validate_json((job.parent / "state.json").read_text())
    ((_, entry),) = state.jobs.items()
    assert sorted(entry.finished) == list(CONCS)

    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    report = ingest_paths([runs], db)
    assert report.inserted == 3 and not report.skipped
    with open_store(db) as store:
        stored = store.query()
    assert sorted(s.record.identity.concurrency for s in stored) == list(CONCS)
    assert {s.record.provenance.engine for s in stored} == {"sim"}
    assert {s.record.identity.hardware_decode for s in stored} == {"h200"}


def test_a_job_costed_as_another_engine_says_so_in_its_summary_and_outcome(
    tmp_path: Path,
) -> None:
    """ATOM has no simulator profile: the simulator costs it as vLLM, and the run says so
    where a reader looks (the plan's warning, the summary row, outcome.json), not only in the
    server log."""
    tree, runs = _tree(tmp_path / "tree"), tmp_path / "runs"
    master = tree / "configs" / "nvidia-master.yaml"
    master.write_text(master.read_text().replace("framework: vllm", "framework: atom"))
    args = ("--root", str(tree), "--engine", "sim", "--runs-dir", str(runs), "--max-jobs", "1")
    done = _cli(tmp_path, *args, timeout=90)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout + done.stderr
    assert "warning: ATOM has no simulator profile: costed as vLLM" in out
    said = "costed as vllm (its engine has no simulator profile)"
    assert f"llama3.1-8b-bf16-h200-vllm: completed (3/3 ok), {said}" in out  # the progress line
    (row,) = [line for line in out.splitlines() if "  completed  " in line]  # the summary's
    assert row.split()[3] == "3/3" and said in row
    job = _job_dir(runs)
    outcome = json.loads((job / "outcome.json").read_text())
    assert outcome["status"] == "completed" and outcome["costed_as"] == "vllm"
    plan = Plan.model_validate_json((job / "plan.json").read_text())
    assert plan.costed_as == "vllm"
    assert plan.warnings == ("ATOM has no simulator profile: costed as vLLM",)


def _options(tree: Path, runs: Path, **over: object) -> RunOptions:
    return RunOptions(root=tree, engine=Engine.SIM, runs_dir=runs, **over)  # type: ignore[arg-type]


def _run(
    options: RunOptions, deps: list[Deployment], events: RunEvents, simulator: OpenJob = open_job
) -> RunSummary:
    request = build_request(
        options, load_project(options.root), deps, stop=StopRequest(), simulator=simulator
    )
    if isinstance(events, _StopAfter):
        events.stop = request.stop
    return execute_run(request, events)


class _StopAfter(RunEvents):
    """The first Ctrl-C, as it lands while point `after` runs: that point finishes."""

    def __init__(self, after: int) -> None:
        self.after, self.seen = after, 0
        self.stop: StopRequest | None = None

    def point_done(self, dep: Deployment, point: PointOutcome) -> None:
        self.seen += 1
        if self.seen == self.after and self.stop is not None:
            self.stop.request()


def _resume(runs: Path, run_id: str) -> RunSummary:
    saved = load_saved_run(runs, run_id)
    return _run(saved.options(runs), saved.deployments, RunEvents())


def test_a_stopped_virtual_run_resumes_only_the_points_left(tmp_path: Path) -> None:
    tree, runs = _tree(tmp_path / "tree"), tmp_path / "runs"
    _, deps = load_deployments(tree, SweepFilters())
    summary = _run(_options(tree, runs), deps, _StopAfter(1))
    assert summary.interrupted and summary.points_left == 2
    ((_, outcome),) = summary.outcomes
    assert outcome.status == "interrupted" and [p.concurrency for p in outcome.points] == [4]
    job = summary.run.job(deps[0].fingerprint).path
    assert sorted(p.name for p in (job / "results").glob("conc*.json")) == ["conc4.json"]

    resumed = _resume(runs, summary.run.run_id)
    assert resumed.ok and resumed.points_left == 0
    assert [line.split()[1] for line in _done_lines(job)] == ["conc=4", "conc=8", "conc=16"]
    state = RunState.model_validate_json(summary.run.state_json.read_text())
    assert [j.status for j in state.jobs.values()] == ["completed"]


@dataclass
class _CutAt:
    """The real simulator, with a second Ctrl-C landing inside point `conc`."""

    conc: int

    def __call__(self, job_file: Path) -> JobSimulator:
        return _Cut(open_job(job_file), self.conc)


@dataclass
class _Cut:
    sim: JobSimulator
    conc: int

    @property
    def warnings(self) -> tuple[str, ...]:
        return self.sim.warnings

    def describe(self) -> str:
        return self.sim.describe()

    def random_point(self, concurrency: int, num_prompts: int, result_path: Path) -> SimulatedPoint:
        if concurrency == self.conc:
            raise KeyboardInterrupt
        return self.sim.random_point(concurrency, num_prompts, result_path)

    def agentic_point(self, *args: object, **kwargs: object) -> SimulatedPoint:
        raise AssertionError("no agentic job here")


def test_a_second_ctrl_c_mid_point_leaves_that_point_to_do(tmp_path: Path) -> None:
    tree, runs = _tree(tmp_path / "tree"), tmp_path / "runs"
    _, deps = load_deployments(tree, SweepFilters())
    summary = _run(_options(tree, runs), deps, RunEvents(), simulator=_CutAt(8))
    assert summary.interrupted and summary.points_left == 2
    ((_, outcome),) = summary.outcomes
    assert outcome.status == "interrupted" and "to do: [8, 16]" in outcome.reason
    job = summary.run.job(deps[0].fingerprint).path
    assert not (job / "results" / "conc8.json").exists()
    resumed = _resume(runs, summary.run.run_id)
    assert resumed.ok
    assert sorted(p.name for p in (job / "results").glob("conc*.json")) == [
        "conc16.json",
        "conc4.json",
        "conc8.json",
    ]
    assert len(_done_lines(job)) == 3  # conc 4 was not simulated again


def test_a_deployment_the_simulator_refuses_fails_as_its_server_would(tmp_path: Path) -> None:
    tree, runs = _tree(tmp_path / "tree", model="acme/NoSuchModel-1B"), tmp_path / "runs"
    _, deps = load_deployments(tree, SweepFilters())
    summary = _run(_options(tree, runs), deps, RunEvents())
    ((_, outcome),) = summary.outcomes
    assert outcome.status == "server_crashed" and not outcome.points
    assert "the simulator refused the deployment" in outcome.reason
    assert "NoSuchModel" in outcome.reason
    server_log = summary.run.job(deps[0].fingerprint).path / "logs" / "server.log"
    assert "NoSuchModel" in server_log.read_text()


def test_the_clock_is_the_runs_own_setting(tmp_path: Path) -> None:
    tree, runs = _tree(tmp_path / "tree"), tmp_path / "runs"
    _, deps = load_deployments(tree, SweepFilters(conc=(4,)))
    summary = _run(_options(tree, runs), deps, RunEvents())
    info = load_saved_run(runs, summary.run.run_id).info
    assert info.settings.plan["sim_realtime"] is False
    refuse_conflicts(info, RunOptions(root=tree), {"sim_realtime"})
    realtime = RunOptions(root=tree, plan=PlanOptions(sim_realtime=True))
    with pytest.raises(InputError, match="--sim-realtime True"):
        refuse_conflicts(info, realtime, {"sim_realtime"})


@pytest.mark.slow
def test_sim_realtime_serves_each_point_with_the_same_identity(tmp_path: Path) -> None:
    """`--sim-realtime`: `sim serve` and the load generator, as before the virtual clock; the
    point is stored under the same identity as the virtual clock's."""
    tree = _tree(tmp_path / "tree", osl=8)
    base = ("--root", str(tree), "--engine", "sim", "--max-prompts", "2", "--concurrency", "4")
    real, virtual = tmp_path / "real", tmp_path / "virtual"
    done = _cli(tmp_path, *base, "--runs-dir", str(real), "--sim-realtime", timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    job = _job_dir(real)
    result = read_point_result(job / "results" / "conc4.json")
    assert result.inferbench.endpoint.base_url.startswith("http://127.0.0.1:")
    assert "listening on http://127.0.0.1" in (job / "logs" / "server.log").read_text()
    assert load_saved_run(real, job.parent.name).options(real).plan.sim_realtime
    done = _cli(tmp_path, *base, "--runs-dir", str(virtual), timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    assert ingest_paths([real, virtual], db).inserted == 2
    with open_store(db) as store:
        first, second = (s.record for s in store.query())
    assert first.identity == second.identity
    assert first.provenance.engine == second.provenance.engine == "sim"
