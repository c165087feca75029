"""Sweep execution: every deployment of a sweep through one backend, resumable at any point.

Per deployment: plan it, write job/plan/env files, execute the points not yet finished,
record the outcome. Only infrastructure failures are retried; a failed job never stops the
sweep unless `fail_fast`. The state file is rewritten after every finished point.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from inferbench.errors import InferbenchError
from inferbench.fsio import atomic_write_text
from inferbench.launch.deployment import Deployment
from inferbench.launch.execute import ExecResult, Executor
from inferbench.launch.outcome import RETRYABLE, JobStatus, Outcome, PointOutcome
from inferbench.launch.plan import Backend, Engine, Plan
from inferbench.launch.rundir import (
    JobDir,
    RunDir,
    RunInfo,
    environment_record,
    new_run_id,
    read_run_info,
    run_dir,
    utc_now,
    write_json,
    write_run_info,
)
from inferbench.launch.state import StateFile


class RunEvents:
    """Progress hooks for a renderer; the library itself never prints."""

    def job_started(self, dep: Deployment, attempt: int, todo: int) -> None: ...

    def point_done(self, dep: Deployment, point: PointOutcome) -> None: ...

    def job_finished(self, dep: Deployment, outcome: Outcome) -> None: ...


@dataclass(frozen=True)
class RunRequest:
    deployments: Sequence[Deployment]
    backend: Backend
    engine: Engine | None
    runs_dir: Path
    root: Path
    planner: Callable[[Deployment, JobDir], Plan]
    executor: Executor
    resume: str | None = None
    retries: int = 0
    fail_fast: bool = False
    max_jobs: int | None = None
    filters: dict[str, object] = field(default_factory=dict)
    cluster: str | None = None


@dataclass
class RunSummary:
    run: RunDir
    outcomes: list[tuple[Deployment, Outcome]] = field(default_factory=list)
    skipped: list[Deployment] = field(default_factory=list)  # already done in a resumed run
    stopped_early: bool = False

    @property
    def ok(self) -> bool:
        return all(o.status is JobStatus.COMPLETED for _, o in self.outcomes)


def open_run(request: RunRequest) -> RunDir:
    """A new run directory, or the one `resume` names (checked to exist)."""
    if request.resume:
        run = run_dir(request.runs_dir, request.resume)
        read_run_info(run)
        return run
    run = run_dir(request.runs_dir, new_run_id())
    run.path.mkdir(parents=True, exist_ok=False)
    info = RunInfo(
        run_id=run.run_id,
        created=utc_now(),
        backend=str(request.backend),
        engine=str(request.engine) if request.engine else None,
        root=str(request.root),
        filters=request.filters,
        cluster=request.cluster,
    )
    write_run_info(run, info)
    return run


def _outcome(
    result: ExecResult, plan: Plan | None, attempt: int, started: str, request: RunRequest
) -> Outcome:
    return Outcome(
        status=result.status,
        attempt=attempt,
        backend=str(request.backend),
        engine=str(plan.engine if plan else request.engine or ""),
        host=socket.gethostname(),
        cluster=request.cluster,
        started=started,
        finished=utc_now(),
        reason=result.reason,
        log_tail=result.log_tail,
        points=tuple(result.points),
        slurm_job_id=result.slurm_job_id,
        base_url=result.base_url,
        timings_s={k: round(v, 4) for k, v in result.timings_s.items()},
    )


def _attempt(
    dep: Deployment, job_dir: JobDir, state: StateFile, request: RunRequest, events: RunEvents
) -> Outcome:
    attempt = state.start_attempt(dep.fingerprint)
    started = utc_now()
    job_dir.make()
    atomic_write_text(job_dir.job_json, dep.job_json)
    plan: Plan | None = None
    try:
        plan = request.planner(dep, job_dir)
    except InferbenchError as exc:
        result = ExecResult(status=JobStatus.PLAN_ERROR, reason=exc.render())
        return _outcome(result, None, attempt, started, request)
    atomic_write_text(job_dir.plan_json, plan.to_json())
    write_json(job_dir.env_json, environment_record({"backend": str(request.backend)}))
    done = set(state.job(dep.fingerprint).finished)
    todo = [p for p in plan.bench.points if p.concurrency not in done]
    events.job_started(dep, attempt, len(todo))

    def on_point(point: PointOutcome) -> None:
        state.point_finished(dep.fingerprint, point.concurrency, point.ok)
        events.point_done(dep, point)

    def on_submitted(job_id: str | None) -> None:
        state.set_slurm_job(dep.fingerprint, job_id)

    t0 = time.monotonic()
    result = request.executor.execute(plan, job_dir, todo, on_point, on_submitted)
    result.timings_s.setdefault("total", time.monotonic() - t0)
    return _outcome(result, plan, attempt, started, request)


def _run_one(
    dep: Deployment, run: RunDir, state: StateFile, request: RunRequest, events: RunEvents
) -> Outcome:
    job_dir = run.job(dep.fingerprint)
    while True:
        try:
            outcome = _attempt(dep, job_dir, state, request, events)
        except KeyboardInterrupt:
            state.job(dep.fingerprint).status = "pending"  # resumable, not done
            state.save()
            raise
        write_json(job_dir.outcome_json, outcome.model_dump(mode="json"))
        retry = outcome.status in RETRYABLE and outcome.attempt <= request.retries
        if not retry:
            state.job_finished(dep.fingerprint, outcome.status)
            events.job_finished(dep, outcome)
            return outcome


def execute_run(request: RunRequest, events: RunEvents | None = None) -> RunSummary:
    """Run (or resume) a sweep; returns every job's outcome in sweep order."""
    events = events or RunEvents()
    run = open_run(request)
    state = StateFile(run.state_json, run.run_id)
    summary = RunSummary(run=run)
    deployments = list(request.deployments)[: request.max_jobs]
    for dep in deployments:
        state.reconcile(dep.fingerprint, run.job(dep.fingerprint).results)
        if state.job(dep.fingerprint).done:
            summary.skipped.append(dep)
            continue
        outcome = _run_one(dep, run, state, request, events)
        summary.outcomes.append((dep, outcome))
        if request.fail_fast and outcome.status is not JobStatus.COMPLETED:
            summary.stopped_early = True
            break
    return summary
