"""What every backend shares: the steps around running one plan's remaining points.

A backend supplies only `run`. `Executor.execute` writes the job's folders and rendered files
first, then records a `LaunchFailure` (a dead server, a killed job, a refused submission) as
the job's status while keeping what `run` had recorded by then: finished points, timings and
the job id. Logs stay where the backend wrote them, under the job directory.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from inferbench.core.fsio import atomic_write_text, make_executable
from inferbench.core.outcome import PointOutcome, SlurmJobRecord
from inferbench.core.status import JobStatus
from inferbench.launch.outcome import LaunchFailure
from inferbench.launch.plan import BenchPoint, Plan
from inferbench.launch.rundir import JobDir
from inferbench.launch.stop import StopRequest


@dataclass
class ExecResult:
    status: JobStatus
    reason: str = ""
    log_tail: str = ""
    base_url: str | None = None
    slurm_job_id: str | None = None
    slurm_jobs: list[SlurmJobRecord] = field(default_factory=list)
    points: list[PointOutcome] = field(default_factory=list)
    timings_s: dict[str, float] = field(default_factory=dict)


def write_rendered(plan: Plan, job_dir: JobDir) -> None:
    for file in plan.files:
        target = job_dir.rendered / Path(file.name).name  # a plain name: no escaping the folder
        atomic_write_text(target, file.content)
        if file.executable:
            make_executable(target)


def _ignore(_: object) -> None:
    return None


@dataclass(frozen=True)
class JobRun:
    """One attempt at one plan, as a backend sees it."""

    plan: Plan
    job_dir: JobDir
    todo: Sequence[BenchPoint]  # the points not finished by an earlier attempt
    on_point: Callable[[PointOutcome], None] = _ignore  # a point finished (state is saved)
    on_submitted: Callable[[str | None], None] = _ignore  # a scheduler accepted the job
    stop: StopRequest = field(default_factory=StopRequest)  # Ctrl-C: finish the current point


def _gate(result: ExecResult) -> None:
    """A job that ran but whose points failed their failure-rate gate is POINTS_FAILED."""
    failed = [p for p in result.points if not p.ok]
    if result.status is JobStatus.COMPLETED and failed:
        result.status = JobStatus.POINTS_FAILED
        result.reason = f"concurrency {', '.join(str(p.concurrency) for p in failed)} failed: "
        result.reason += "; ".join(p.reason for p in failed)


class Executor(ABC):
    """A backend: `execute` is the same for all; each supplies `run`."""

    def execute(
        self,
        plan: Plan,
        job_dir: JobDir,
        todo: Sequence[BenchPoint],
        on_point: Callable[[PointOutcome], None] = _ignore,
        on_submitted: Callable[[str | None], None] = _ignore,
        stop: StopRequest | None = None,
    ) -> ExecResult:
        job_dir.make()
        write_rendered(plan, job_dir)
        result = ExecResult(status=JobStatus.COMPLETED)
        try:
            job = JobRun(plan, job_dir, todo, on_point, on_submitted, stop or StopRequest())
            self.run(job, result)
        except LaunchFailure as failure:  # an outcome, not an error: what was recorded stays
            result.status, result.reason = failure.status, failure.reason
            result.log_tail = failure.log_tail
        _gate(result)
        return result

    @abstractmethod
    def run(self, job: JobRun, result: ExecResult) -> None:
        """Run `job.todo`, recording into `result` as it goes; a fault raises LaunchFailure.
        A stop request (first Ctrl-C) ends the job after the current point as INTERRUPTED;
        anything else (a second Ctrl-C included) propagates once the backend has cleaned up."""
