"""Sweep execution: outcomes, retries only for infrastructure failures, fail-fast, resume."""

from __future__ import annotations

import json
import socket
from pathlib import Path

from inferbench.core.outcome import PointOutcome
from inferbench.core.status import JobStatus, PointStatus
from inferbench.launch.deployment import Deployment, deployment_from_dicts
from inferbench.launch.local import LocalExecutor, LocalOptions
from inferbench.launch.plan import Backend, Plan
from inferbench.launch.rundir import JobDir
from inferbench.launch.runner import RunEvents, RunRequest, execute_run
from inferbench.launch.state import RunState

from .conftest import http_point, job_dict, server_plan

OPTS = LocalOptions(health_timeout_s=10, health_poll_s=0.02, stop_grace_s=2)


def _deps(n: int) -> list[Deployment]:
    return [
        deployment_from_dicts([job_dict(**{"config-key": f"llama-{i}"}, conc=c) for c in (1, 2)])
        for i in range(1, n + 1)
    ]


def _request(tmp: Path, deps: list[Deployment], planner: object, **kw: object) -> RunRequest:
    return RunRequest(
        deployments=deps,
        backend=Backend.LOCAL,
        engine=None,
        runs_dir=tmp / "runs",
        root=tmp,
        planner=planner,  # type: ignore[arg-type]
        executor=LocalExecutor(http_point, OPTS),
        **kw,  # type: ignore[arg-type]
    )


def _healthy(dep: Deployment, job_dir: JobDir) -> Plan:
    return server_plan(concs=dep.concurrencies, fp=dep.fingerprint)


def test_run_writes_the_layout(tmp_path: Path) -> None:
    summary = execute_run(_request(tmp_path, _deps(2), _healthy))
    assert summary.ok and len(summary.outcomes) == 2
    run = summary.run
    info = json.loads(run.run_json.read_text())
    assert info["run_id"] == run.run_id and info["backend"] == "local"
    state = RunState.model_validate_json(run.state_json.read_text())
    for dep in _deps(2):
        job = run.job(dep.fingerprint)
        assert json.loads(job.job_json.read_text())["fingerprint"] == dep.fingerprint
        assert json.loads(job.plan_json.read_text())["fingerprint"] == dep.fingerprint
        assert json.loads(job.outcome_json.read_text())["status"] == "completed"
        assert "environment" in json.loads(job.env_json.read_text())
        assert sorted(p.name for p in job.results.iterdir()) == ["conc1.json", "conc2.json"]
        assert state.jobs[dep.fingerprint].finished == [1, 2]


def test_failed_job_does_not_stop_the_sweep_unless_fail_fast(tmp_path: Path) -> None:
    deps = _deps(3)

    def planner(dep: Deployment, job_dir: JobDir) -> Plan:
        flags = ("--crash-at-start",) if dep is deps[0] else ()
        return server_plan(*flags, concs=dep.concurrencies, fp=dep.fingerprint)

    summary = execute_run(_request(tmp_path / "a", deps, planner))
    statuses = [o.status for _, o in summary.outcomes]
    assert statuses == [JobStatus.SERVER_CRASHED, JobStatus.COMPLETED, JobStatus.COMPLETED]
    assert summary.outcomes[0][1].attempt == 1  # a crash is not retried

    summary = execute_run(_request(tmp_path / "b", deps, planner, fail_fast=True))
    assert [o.status for _, o in summary.outcomes] == [JobStatus.SERVER_CRASHED]
    assert summary.stopped_early


def test_infrastructure_failures_are_retried(tmp_path: Path) -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    busy = sock.getsockname()[1]
    calls: list[int] = []

    def planner(dep: Deployment, job_dir: JobDir) -> Plan:
        calls.append(1)
        plan = server_plan(concs=dep.concurrencies, fp=dep.fingerprint)
        if len(calls) == 1:  # first attempt: a port someone else holds
            proc = plan.processes[0].model_copy(update={"port": busy})
            plan = plan.model_copy(update={"processes": (proc,)})
        return plan

    try:
        summary = execute_run(_request(tmp_path, _deps(1), planner, retries=2))
    finally:
        sock.close()
    ((_, outcome),) = summary.outcomes
    assert outcome.status is JobStatus.COMPLETED and outcome.attempt == 2


def test_failed_gate_is_recorded_per_point(tmp_path: Path) -> None:
    def gate(base_url: str, spec: object, point: object, out: Path, log: Path) -> PointOutcome:
        result = http_point(base_url, spec, point, out, log)  # type: ignore[arg-type]
        if result.concurrency == 2:
            return result.model_copy(
                update={"status": PointStatus.FAILED, "reason": "failure rate 12% > 5%"}
            )
        return result

    request = _request(tmp_path, _deps(1), _healthy)
    request = RunRequest(**{**request.__dict__, "executor": LocalExecutor(gate, OPTS)})
    ((_, outcome),) = execute_run(request).outcomes
    assert outcome.status is JobStatus.POINTS_FAILED
    assert "concurrency 2" in outcome.reason and "12%" in outcome.reason
    assert [(p.concurrency, p.ok) for p in outcome.points] == [(1, True), (2, False)]


def test_resume_skips_finished_jobs_and_points(tmp_path: Path) -> None:
    deps = _deps(2)
    first = execute_run(_request(tmp_path, deps[:1], _healthy))
    # a point finished on disk but not yet in the state (a kill between the two writes)
    job = first.run.job(deps[1].fingerprint)
    job.make()
    job.result_file(1).write_text('{"max_concurrency": 1}')
    ran: list[int] = []

    def counting(base_url: str, spec: object, point: object, out: Path, log: Path) -> PointOutcome:
        result = http_point(base_url, spec, point, out, log)  # type: ignore[arg-type]
        ran.append(result.concurrency)
        return result

    request = _request(tmp_path, deps, _healthy, resume=first.run.run_id)
    request = RunRequest(**{**request.__dict__, "executor": LocalExecutor(counting, OPTS)})
    summary = execute_run(request)
    assert [d.fingerprint for d in summary.skipped] == [deps[0].fingerprint]
    assert ran == [2]  # conc 1 of the second job was already on disk
    state = RunState.model_validate_json(summary.run.state_json.read_text())
    assert sorted(state.jobs[deps[1].fingerprint].finished) == [1, 2]


def test_the_report_counts_the_outcomes_the_runner_wrote(tmp_path: Path) -> None:
    # what the runner records is what the report counts: a clean run shows no failed job,
    # a run with a crashed server shows exactly that one
    from inferbench.report.outcomes import outcomes_payload
    from inferbench.results.ingest import ingest_paths

    deps = _deps(3)

    def planner(dep: Deployment, job_dir: JobDir) -> Plan:
        flags = ("--crash-at-start",) if dep is deps[0] else ()
        return server_plan(*flags, concs=dep.concurrencies, fp=dep.fingerprint)

    clean = execute_run(_request(tmp_path / "a", deps[1:], _healthy))
    report = ingest_paths([clean.run.path], f"sqlite:///{tmp_path / 'a.sqlite'}")
    assert outcomes_payload(report.outcomes)["failed"] == 0
    broken = execute_run(_request(tmp_path / "b", deps, planner))
    counts = outcomes_payload(
        ingest_paths([broken.run.path], f"sqlite:///{tmp_path / 'b.sqlite'}").outcomes
    )
    assert (counts["total"], counts["failed"]) == (3, 1)
    assert counts["by_status"] == {"completed": 2, "server_crashed": 1}


def test_run_json_names_the_trees_commit(tmp_path: Path) -> None:
    import subprocess

    from inferbench.launch.rundir import tree_commit

    assert tree_commit(tmp_path) is None  # not a checkout: no commit, no error
    tree = tmp_path / "tree"
    tree.mkdir()
    git = ["git", "-C", str(tree), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "x"], check=True)
    sha = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    summary = execute_run(_request(tree, _deps(1), _healthy))
    assert json.loads(summary.run.run_json.read_text())["commit"] == sha.strip()


def test_the_run_hands_each_plan_to_its_events_before_starting(tmp_path: Path) -> None:
    seen: list[tuple[str, tuple[str, ...]]] = []

    class Events(RunEvents):
        def planned(self, dep: Deployment, plan: Plan) -> None:
            seen.append((dep.fingerprint, plan.warnings))

        def job_started(self, dep: Deployment, attempt: int, todo: int) -> None:
            assert seen and seen[-1][0] == dep.fingerprint  # the plan came first

    def warned(dep: Deployment, job_dir: JobDir) -> Plan:
        plan = _healthy(dep, job_dir)
        return plan.model_copy(update={"warnings": ("the tree has a script for this job",)})

    deps = _deps(2)
    assert execute_run(_request(tmp_path, deps, warned), Events()).ok
    assert seen == [(d.fingerprint, ("the tree has a script for this job",)) for d in deps]
