"""The local backend: run a plan's server on this machine, drive it point by point, stop it.

Also what runs inside a Slurm allocation (see `inalloc.py`): the same code either way.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from inferbench.core.errors import InferbenchError
from inferbench.core.outcome import PointOutcome
from inferbench.core.status import JobStatus
from inferbench.launch.evalstep import read_job, run_evals
from inferbench.launch.execute import ExecResult, Executor, JobRun
from inferbench.launch.outcome import LaunchFailure
from inferbench.launch.plan import BenchPoint, BenchSpec, Plan
from inferbench.launch.process import ServerProcess, log_tail
from inferbench.launch.rundir import JobDir
from inferbench.launch.stop import StopRequest

# Drives one concurrency point against a healthy server and writes its result file.
PointRunner = Callable[[str, BenchSpec, BenchPoint, Path, Path], PointOutcome]


@dataclass(frozen=True)
class LocalOptions:
    health_timeout_s: float = 900.0  # real engines load weights and capture graphs first
    health_poll_s: float = 0.02
    stop_grace_s: float = 10.0


def _drive(
    server: ServerProcess,
    job: JobRun,
    run_point: PointRunner,
    result: ExecResult,
    tree: Path | None = None,
) -> None:
    assert server.base_url is not None
    for point in job.todo:
        if job.stop.requested:  # the first Ctrl-C: this point and the rest stay to do
            raise LaunchFailure(
                JobStatus.INTERRUPTED, f"stopped on request before concurrency {point.concurrency}"
            )
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
                job.plan.bench,
                point,
                job.job_dir.result_file(point.concurrency),
                job.job_dir.logs / "client.log",
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
        job.on_point(outcome)
    if job.plan.bench.eval is not None and not job.stop.requested:
        run_evals(
            server.base_url,
            job.plan.bench,
            job.job_dir.results,
            job.job_dir.logs,
            read_job(job.job_dir.job_json),
            tree=tree,
        )


@dataclass(frozen=True)
class LocalExecutor(Executor):
    """Runs plans on this machine; `run_point` drives one concurrency point."""

    run_point: PointRunner
    options: LocalOptions = field(default_factory=LocalOptions)
    tree_root: Path | None = None  # the benchmark tree, for plans through its own script

    def run(self, job: JobRun, result: ExecResult) -> None:
        """Start the server, wait for health, run the points, always stop the server."""
        if job.plan.script is not None:  # the tree's script starts and stops its server
            from inferbench.launch.treescript.execute import run_script_job

            root = self.tree_root or Path(".")
            run_script_job(root, job, result, self.options.stop_grace_s)
            return
        server = ServerProcess(
            job.plan.processes[0], job.job_dir.path, job.job_dir.logs / "server.log"
        )
        t0 = time.monotonic()
        try:
            server.start()
            result.timings_s["spawn"] = time.monotonic() - t0
            result.base_url = server.wait_healthy(
                self.options.health_timeout_s, self.options.health_poll_s
            )
            result.timings_s["server_start"] = server.ready_at - server.started_at
            t1 = time.monotonic()
            _drive(server, job, self.run_point, result, self.tree_root)
            result.timings_s["bench"] = time.monotonic() - t1
        finally:
            t2 = time.monotonic()
            server.stop(self.options.stop_grace_s)
            result.timings_s["teardown"] = time.monotonic() - t2


def run_local(
    plan: Plan,
    job_dir: JobDir,
    todo: Sequence[BenchPoint],
    run_point: PointRunner,
    on_point: Callable[[PointOutcome], None] = lambda _: None,
    options: LocalOptions | None = None,
    stop: StopRequest | None = None,
) -> ExecResult:
    """The local backend as a function (what runs inside a Slurm allocation)."""
    executor = LocalExecutor(run_point, options or LocalOptions())
    return executor.execute(plan, job_dir, todo, on_point, stop=stop)
