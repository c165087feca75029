"""Launch-side outcome helpers: Slurm states as job statuses, and the early-exit exception.

The outcome models themselves (`Outcome`, `PointOutcome`, `JobStatus`) live in
`inferbench.core`, shared with the results store and the report.
"""

from __future__ import annotations

from inferbench.core.status import JobStatus

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


class LaunchFailure(Exception):
    """A deployment ended early; carries the status to record and the log tail."""

    def __init__(self, status: JobStatus, reason: str, log_tail: str = "") -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason
        self.log_tail = log_tail
