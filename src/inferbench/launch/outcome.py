"""Job outcomes: what happened to one deployment, recorded whatever happened."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field


class JobStatus(StrEnum):
    COMPLETED = "completed"  # every point ran and passed its gate
    POINTS_FAILED = "points_failed"  # the server ran; some point failed its failure-rate gate
    START_FAILED = "start_failed"  # the server command could not be executed (not installed?)
    SERVER_CRASHED = "server_crashed"  # the server exited before or while serving
    UNHEALTHY = "unhealthy"  # the server never answered its health probe in time
    PORT_IN_USE = "port_in_use"
    BENCH_ERROR = "bench_error"  # the load generator itself could not run
    SUBMIT_FAILED = "submit_failed"  # sbatch / srtctl refused the job
    FAILED = "failed"  # Slurm FAILED (the batch script exited non-zero)
    TIMEOUT = "timeout"
    CANCELLED = "cancelled"
    NODE_FAIL = "node_fail"
    OUT_OF_MEMORY = "out_of_memory"
    PREEMPTED = "preempted"
    INTERRUPTED = "interrupted"  # Ctrl-C of the orchestrator
    PLAN_ERROR = "plan_error"  # the job could not be planned for this backend


# Failures of the infrastructure, not of the configuration under test: worth a retry.
RETRYABLE = frozenset(
    {JobStatus.PORT_IN_USE, JobStatus.NODE_FAIL, JobStatus.PREEMPTED, JobStatus.SUBMIT_FAILED}
)

# Slurm job states (squeue / scontrol / sacct) and what they mean for a job.
SLURM_STATES = {
    "COMPLETED": JobStatus.COMPLETED,
    "FAILED": JobStatus.FAILED,
    "TIMEOUT": JobStatus.TIMEOUT,
    "DEADLINE": JobStatus.TIMEOUT,
    "CANCELLED": JobStatus.CANCELLED,
    "NODE_FAIL": JobStatus.NODE_FAIL,
    "OUT_OF_MEMORY": JobStatus.OUT_OF_MEMORY,
    "PREEMPTED": JobStatus.PREEMPTED,
    "BOOT_FAIL": JobStatus.NODE_FAIL,
}


def slurm_status(state: str) -> JobStatus | None:
    """Map a Slurm state (`CANCELLED by 0` included) to a job status; None while it lives."""
    word = state.strip().split()[0].rstrip("+") if state.strip() else ""
    return SLURM_STATES.get(word)


class PointOutcome(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    concurrency: int
    ok: bool
    reason: str = ""
    result_file: str | None = None  # relative to the job directory


class Outcome(BaseModel):
    """`outcome.json` of a job directory."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    status: JobStatus
    attempt: int
    backend: str
    engine: str
    host: str
    cluster: str | None = None
    started: str
    finished: str
    reason: str = ""
    log_tail: str = ""
    points: tuple[PointOutcome, ...] = ()
    slurm_job_id: str | None = None
    base_url: str | None = None
    timings_s: dict[str, float] = Field(default_factory=dict)

    @property
    def retryable(self) -> bool:
        return self.status in RETRYABLE


class LaunchFailure(Exception):
    """A deployment ended early; carries the status to record and the log tail."""

    def __init__(self, status: JobStatus, reason: str, log_tail: str = "") -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason
        self.log_tail = log_tail
