"""The local backend: run a plan's server on this machine, drive it point by point, stop it.

Also what runs inside a Slurm allocation (see `inalloc.py`): the same code either way.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from inferbench.errors import InferbenchError
from inferbench.launch.outcome import JobStatus, LaunchFailure, PointOutcome
from inferbench.launch.plan import BenchPoint, BenchSpec, Plan
from inferbench.launch.process import ServerProcess, log_tail
from inferbench.launch.rundir import JobDir

# Drives one concurrency point against a healthy server and writes its result file.
PointRunner = Callable[[str, BenchSpec, BenchPoint, Path, Path], PointOutcome]


@dataclass(frozen=True)
class LocalOptions:
    health_timeout_s: float = 900.0  # real engines load weights and capture graphs first
    health_poll_s: float = 0.02
    stop_grace_s: float = 10.0


@dataclass
class ExecResult:
    status: JobStatus
    reason: str = ""
    log_tail: str = ""
    base_url: str | None = None
    slurm_job_id: str | None = None
    points: list[PointOutcome] = field(default_factory=list)
    timings_s: dict[str, float] = field(default_factory=dict)


def write_rendered(plan: Plan, job_dir: JobDir) -> None:
    from inferbench.fsio import atomic_write_text

    for file in plan.files:
        target = job_dir.rendered / Path(file.name).name  # a plain name: no escaping the folder
        atomic_write_text(target, file.content)
        if file.executable:
            target.chmod(0o755)


def _drive(
    server: ServerProcess,
    plan: Plan,
    job_dir: JobDir,
    todo: Sequence[BenchPoint],
    run_point: PointRunner,
    on_point: Callable[[PointOutcome], None],
    result: ExecResult,
) -> None:
    assert server.base_url is not None
    for point in todo:
        code = server.exited()
        if code is not None:
            raise LaunchFailure(
                JobStatus.SERVER_CRASHED,
                f"server exited with status {code} mid-run, before concurrency {point.concurrency}",
                log_tail(server.log_path),
            )
        try:
            outcome = run_point(
                server.base_url,
                plan.bench,
                point,
                job_dir.result_file(point.concurrency),
                job_dir.logs / "client.log",
            )
        except InferbenchError as exc:  # the load generator refused its settings
            raise LaunchFailure(JobStatus.BENCH_ERROR, exc.render()) from None
        code = server.exited()
        if code is not None and not outcome.ok:
            raise LaunchFailure(
                JobStatus.SERVER_CRASHED,
                f"server exited with status {code} during concurrency {point.concurrency}",
                log_tail(server.log_path),
            )
        result.points.append(outcome)
        on_point(outcome)


@dataclass(frozen=True)
class LocalExecutor:
    """Runs plans on this machine; `run_point` drives one concurrency point."""

    run_point: PointRunner
    options: LocalOptions = field(default_factory=LocalOptions)

    def execute(
        self,
        plan: Plan,
        job_dir: JobDir,
        todo: Sequence[BenchPoint],
        on_point: Callable[[PointOutcome], None],
        on_submitted: Callable[[str | None], None],
    ) -> ExecResult:
        return run_local(plan, job_dir, todo, self.run_point, on_point, self.options)


def run_local(
    plan: Plan,
    job_dir: JobDir,
    todo: Sequence[BenchPoint],
    run_point: PointRunner,
    on_point: Callable[[PointOutcome], None] = lambda _: None,
    options: LocalOptions | None = None,
) -> ExecResult:
    """Start the server, wait for health, run `todo` points, always stop the server."""
    options = options or LocalOptions()
    job_dir.make()
    write_rendered(plan, job_dir)
    result = ExecResult(status=JobStatus.COMPLETED)
    spec = plan.processes[0]
    server = ServerProcess(spec, job_dir.path, job_dir.logs / "server.log")
    t0 = time.monotonic()
    try:
        server.start()
        result.timings_s["spawn"] = time.monotonic() - t0
        result.base_url = server.wait_healthy(options.health_timeout_s, options.health_poll_s)
        result.timings_s["server_start"] = server.ready_at - server.started_at
        t1 = time.monotonic()
        _drive(server, plan, job_dir, todo, run_point, on_point, result)
        result.timings_s["bench"] = time.monotonic() - t1
    except LaunchFailure as failure:
        result.status, result.reason, result.log_tail = (
            failure.status,
            failure.reason,
            failure.log_tail,
        )
    finally:
        t2 = time.monotonic()
        server.stop(options.stop_grace_s)
        result.timings_s["teardown"] = time.monotonic() - t2
    if result.status is JobStatus.COMPLETED and any(not p.ok for p in result.points):
        failed = [str(p.concurrency) for p in result.points if not p.ok]
        result.status = JobStatus.POINTS_FAILED
        result.reason = f"concurrency {', '.join(failed)} failed: " + "; ".join(
            p.reason for p in result.points if not p.ok
        )
    return result
