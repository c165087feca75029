"""Sweep execution: every deployment of a sweep through one backend, resumable at any point.

Per deployment: plan it, write job/plan/env files, execute the points not yet finished,
record the outcome. Only infrastructure failures are retried; a failed job never stops the
sweep unless `fail_fast`. The state file is rewritten after every finished point.

A stop request (the first Ctrl-C) lets the current point finish, then ends the job as
INTERRUPTED and starts nothing new; a KeyboardInterrupt (the second) ends it at once. Either
way the job stays resumable and the summary says `interrupted`. The run directory is locked
while the run lives (see lock.py).
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from inferbench.core.accelerator import Accelerator
from inferbench.core.errors import InferbenchError
from inferbench.core.fsio import WriteFailed, atomic_write_text
from inferbench.core.outcome import Outcome, PointOutcome
from inferbench.core.rundir import JobsEntry, RunInfo, RunSettings, write_jobs, write_record
from inferbench.core.status import JobStatus
from inferbench.launch.accelerator import detect_accelerator
from inferbench.launch.deployment import Deployment
from inferbench.launch.execute import ExecResult, Executor
from inferbench.launch.lock import run_lock
from inferbench.launch.plan import Backend, Engine, Plan
from inferbench.launch.rundir import (
    JobDir,
    RunDir,
    environment_record,
    new_run_id,
    read_run_info,
    run_dir,
    tree_commit,
    utc_now,
    write_run_info,
)
from inferbench.launch.state import StateFile
from inferbench.launch.stop import StopRequest
from inferbench.launch.storage import is_storage_error, storage_error


class RunEvents:
    """Progress hooks for a renderer; the library itself never prints."""

    def planned(self, dep: Deployment, plan: Plan) -> None:
        """The job's plan, before anything starts (its warnings are for the user)."""

    def job_started(self, dep: Deployment, attempt: int, todo: int) -> None: ...

    def point_done(self, dep: Deployment, point: PointOutcome) -> None: ...

    def job_finished(self, dep: Deployment, outcome: Outcome, points_ok: int) -> None:
        """`points_ok`: the job's points with a passing result, earlier attempts' included."""


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
    settings: RunSettings = field(default_factory=RunSettings)  # kept in run.json for --resume
    stop: StopRequest = field(default_factory=StopRequest)


@dataclass
class RunSummary:
    run: RunDir
    outcomes: list[tuple[Deployment, Outcome]] = field(default_factory=list)
    skipped: list[Deployment] = field(default_factory=list)  # already done in a resumed run
    stopped_early: bool = False
    interrupted: bool = False  # stopped on request (Ctrl-C): `--resume` continues it
    points_left: int = 0  # points a resume would run
    # fingerprint -> the job's points with a passing result, over all attempts and resumes
    # (an outcome's own points are only those its attempt ran)
    points_ok: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.interrupted and all(
            o.status is JobStatus.COMPLETED for _, o in self.outcomes
        )


def open_run(request: RunRequest) -> RunDir:
    """A new run directory, or the one `resume` names (checked to exist)."""
    if request.resume:
        run = run_dir(request.runs_dir, request.resume)
        read_run_info(run)
        return run
    run = run_dir(request.runs_dir, new_run_id())
    run.path.mkdir(parents=True, exist_ok=False)
    return run


def start_run(request: RunRequest) -> RunDir:
    """A new run directory with its run.json and jobs.json (every deployment of the request),
    and nothing run yet: what `run --adaptive` makes before running its rounds as resumes."""
    run = open_run(replace(request, resume=None))
    with run_lock(run.path, run.run_id):
        _record_run(run, request, request.deployments)
    return run


def _record_run(run: RunDir, request: RunRequest, deployments: Sequence[Deployment]) -> None:
    """run.json and jobs.json of a new run: all a resume needs, the tree not re-read."""
    info = RunInfo(
        run_id=run.run_id,
        created=utc_now(),
        backend=str(request.backend),
        engine=str(request.engine) if request.engine else None,
        root=str(request.root),
        filters=request.filters,
        cluster=request.cluster,
        settings=request.settings,
        commit=tree_commit(request.root),
    )
    jobs = [
        JobsEntry(job=json.loads(dep.job_json), concurrencies=dep.concurrencies)
        for dep in deployments
    ]
    write_jobs(run.jobs_json, jobs)
    write_run_info(run, info)


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
        slurm_jobs=tuple(result.slurm_jobs),
        base_url=result.base_url,
        timings_s={k: round(v, 4) for k, v in result.timings_s.items()},
        costed_as=plan.costed_as if plan else None,
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
    events.planned(dep, plan)
    write_record(
        job_dir.env_json,
        environment_record({"backend": str(request.backend)}, _accelerator_here(request)),
    )
    done = set(state.job(dep.fingerprint).finished)
    todo = [p for p in plan.bench.points if p.concurrency not in done]
    events.job_started(dep, attempt, len(todo))

    def on_point(point: PointOutcome) -> None:
        state.point_finished(dep.fingerprint, point.concurrency, point.ok)
        events.point_done(dep, point)

    def on_submitted(job_id: str | None) -> None:
        state.set_slurm_job(dep.fingerprint, job_id)

    t0 = time.monotonic()
    result = request.executor.execute(plan, job_dir, todo, on_point, on_submitted, request.stop)
    result.timings_s.setdefault("total", time.monotonic() - t0)
    return _outcome(result, plan, attempt, started, request)


def _accelerator_here(request: RunRequest) -> Accelerator | None:
    """The local backend runs the engine on this machine: its accelerator. Slurm's engine runs
    on the allocation's node, which records its own (`inalloc`); srtctl's nodes record none."""
    return detect_accelerator() if request.backend is Backend.LOCAL else None


def _cut_short(dep: Deployment, state: StateFile, request: RunRequest, started: str) -> Outcome:
    """The outcome of a job stopped at once (second Ctrl-C): incomplete, its points to do."""
    job = state.job(dep.fingerprint)
    done = set(job.finished)
    left = [c for c in dep.concurrencies if c not in done]
    result = ExecResult(status=JobStatus.INTERRUPTED, reason=f"stopped at once; to do: {left}")
    return _outcome(result, None, job.attempts, started, request)


def _run_one(
    dep: Deployment, run: RunDir, state: StateFile, request: RunRequest, events: RunEvents
) -> Outcome:
    job_dir = run.job(dep.fingerprint)
    tries = 0
    while True:
        tries += 1
        started = utc_now()
        try:
            outcome = _attempt(dep, job_dir, state, request, events)
        except KeyboardInterrupt:  # the backend has stopped its servers
            outcome = _cut_short(dep, state, request, started)
        write_record(job_dir.outcome_json, outcome)
        retry = outcome.retryable and tries <= request.retries
        if not retry or request.stop.requested:
            state.job_finished(dep.fingerprint, outcome.status)
            events.job_finished(dep, outcome, points_ok(dep, state))
            return outcome


def points_ok(dep: Deployment, state: StateFile) -> int:
    """The job's concurrencies with a result that passed its gate, whichever attempt (or
    resume) measured them."""
    job = state.job(dep.fingerprint)
    return len(set(dep.concurrencies) & (set(job.finished) - set(job.failed)))


def _points_left(deployments: Sequence[Deployment], state: StateFile) -> int:
    left = 0
    for dep in deployments:
        job = state.job(dep.fingerprint)
        if not job.done:
            left += len(set(dep.concurrencies) - set(job.finished))
    return left


def execute_run(request: RunRequest, events: RunEvents | None = None) -> RunSummary:
    """Run (or resume) a sweep; returns every job's outcome in sweep order.

    A resume runs the jobs `state.json` has as unfinished (never started, cut short, or ended
    by the infrastructure), and of those only the points without a result."""
    events = events or RunEvents()
    try:
        run = open_run(request)
    except (OSError, WriteFailed) as exc:
        if is_storage_error(exc):
            raise storage_error(exc, request.runs_dir, request.resume) from None
        raise
    try:
        return _execute(run, request, events)
    except (OSError, WriteFailed) as exc:
        if is_storage_error(exc):
            # before run.json and jobs.json are both written there is nothing to resume
            resumable = run.run_json.is_file() and run.jobs_json.is_file()
            raise storage_error(exc, request.runs_dir, run.run_id if resumable else None) from None
        raise


def _execute(run: RunDir, request: RunRequest, events: RunEvents) -> RunSummary:
    deployments = list(request.deployments)[: request.max_jobs]
    with run_lock(run.path, run.run_id):
        if not request.resume:
            _record_run(run, request, deployments)
        state = StateFile(run.state_json, run.run_id)  # read under the lock: it is ours now
        summary = RunSummary(run=run)
        try:
            _run_all(deployments, run, state, request, events, summary)
        except KeyboardInterrupt:  # between two jobs: nothing is running
            summary.interrupted = True
        summary.points_left = _points_left(deployments, state)
    return summary


def _run_all(
    deployments: Sequence[Deployment],
    run: RunDir,
    state: StateFile,
    request: RunRequest,
    events: RunEvents,
    summary: RunSummary,
) -> None:
    for dep in deployments:
        if request.stop.requested:
            summary.interrupted = True
            return
        state.reconcile(dep.fingerprint, run.job(dep.fingerprint).results)
        if state.job(dep.fingerprint).done:
            summary.skipped.append(dep)
            continue
        outcome = _run_one(dep, run, state, request, events)
        summary.outcomes.append((dep, outcome))
        summary.points_ok[dep.fingerprint] = points_ok(dep, state)
        if outcome.status is JobStatus.INTERRUPTED:
            summary.interrupted = True
            return
        if request.fail_fast and outcome.status is not JobStatus.COMPLETED:
            summary.stopped_early = True
            return
