"""What happened to a job and to each of its points, as enums used end to end.

The launcher writes these values into `state.json` and `outcome.json`, the store keeps them,
and the report counts a job as failed exactly when `JobStatus.failed` says so: never by
comparing strings.
"""

from __future__ import annotations

from enum import StrEnum


class JobStatus(StrEnum):
    """The final status of one deployment (one job directory)."""

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
    UNKNOWN = "unknown"  # an outcome file from elsewhere with a status this list lacks

    @property
    def failed(self) -> bool:
        """True for every status but COMPLETED (an interrupted job did not complete either)."""
        return self is not JobStatus.COMPLETED

    @property
    def retryable(self) -> bool:
        """Failures of the infrastructure, not of the configuration under test."""
        return self in RETRYABLE

    @classmethod
    def parse(cls, value: object) -> JobStatus:
        """A status read from a file: known values, the spellings of other tools for success
        (`succeeded`, `success`, `ok`, `done`), else UNKNOWN."""
        text = str(value or "").strip().lower()
        if text in _SUCCESS_SPELLINGS:
            return cls.COMPLETED
        try:
            return cls(text)
        except ValueError:
            return cls.UNKNOWN


_SUCCESS_SPELLINGS = frozenset({"succeeded", "success", "ok", "done"})

RETRYABLE = frozenset(
    {JobStatus.PORT_IN_USE, JobStatus.NODE_FAIL, JobStatus.PREEMPTED, JobStatus.SUBMIT_FAILED}
)


class RunPhase(StrEnum):
    """A job of a live run before it has a final JobStatus (`state.json`)."""

    PENDING = "pending"
    RUNNING = "running"


class PointStatus(StrEnum):
    """One concurrency point of a job."""

    PASSED = "passed"  # measured, and within the failure-rate gate
    FAILED = "failed"  # measured, but failed the gate or the load generator failed
    INCOMPLETE = "incomplete"  # not measured to the end (interrupted, server gone)

    @property
    def ok(self) -> bool:
        return self is PointStatus.PASSED
