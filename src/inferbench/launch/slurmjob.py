"""A job in Slurm's queue, whoever submitted it (sbatch or srtctl): submit it, record its id,
follow it until it leaves the queue, then collect what it left.

States come from `squeue` while the job lives, then `scontrol show job` (kept for MinJobAge),
then `sacct` where accounting is on, and last from the script's own exit-status file.
"""

from __future__ import annotations

import subprocess
import time
from abc import abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from inferbench.core.fsio import atomic_write_text
from inferbench.core.outcome import PointOutcome
from inferbench.core.status import JobStatus
from inferbench.launch.execute import ExecResult, Executor, JobRun
from inferbench.launch.outcome import LaunchFailure, slurm_status
from inferbench.launch.sbatch import EXIT_STATUS_FILE
from inferbench.launch.stop import StopRequest

JOB_ID_FILE = "slurm-job-id"


def query(argv: list[str], timeout: float = 30.0) -> tuple[int, str, str]:
    """Run a Slurm command; (status, stdout, stderr), a failure to run it as status 1."""
    try:  # a session of its own: a Ctrl-C at the terminal is the orchestrator's to handle
        proc = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            start_new_session=True,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return 1, "", str(exc)
    return proc.returncode, proc.stdout.strip(), proc.stderr.strip()


# Pending reasons (squeue %r) under which the job cannot start as submitted: it asks for more
# nodes, time or another account than its partition allows. Waiting would never end.
NEVER_STARTS = frozenset(
    {
        "PartitionNodeLimit",
        "PartitionTimeLimit",
        "PartitionConfig",
        "BadConstraints",
        "InvalidAccount",
        "InvalidQOS",
    }
)


NEVER_STARTS_POLLS = 3


def live_state(job_id: str) -> str | None:
    """The state while `squeue` still lists the job, else None."""
    return (_queued(job_id) or (None, ""))[0]


def _queued(job_id: str) -> tuple[str, str] | None:
    """(state, reason) while `squeue` lists the job."""
    code, out, _ = query(["squeue", "-h", "-j", job_id, "-o", "%T|%r"])
    if code != 0 or not out:
        return None
    state, _, reason = out.splitlines()[0].strip().partition("|")
    return state, reason


def final_state(job_id: str, job_dir: Path) -> tuple[str, str]:
    """(state, where it came from) once the job has left the queue."""
    code, out, _ = query(["scontrol", "-o", "show", "job", job_id])
    if code == 0 and "JobState=" in out:
        return out.split("JobState=", 1)[1].split()[0], "scontrol"
    code, out, _ = query(["sacct", "-n", "-X", "-P", "-j", job_id, "-o", "State"])
    if code == 0 and out and "disabled" not in out:
        return out.splitlines()[0].strip(), "sacct"
    status_file = job_dir / EXIT_STATUS_FILE
    if status_file.is_file():
        rc = status_file.read_text().strip()
        return ("COMPLETED" if rc == "0" else "FAILED"), "exit-status file"
    return "FAILED", "no record (the job left no exit-status file)"


def wait_in_queue(
    job_id: str,
    poll_s: float,
    deadline_s: float | None = None,
    stop: StopRequest | None = None,
    stop_file: Path | None = None,
) -> str | None:
    """Poll until the job leaves the queue; past `deadline_s`, cancel it and keep waiting.
    On a stop request a job still pending is cancelled (nothing of it ran); a running one
    is told through `stop_file` to finish its current point (else it runs to its end).
    A job pending for a reason under which it can never start is cancelled; the return
    value then says why (else None)."""
    start = time.monotonic()
    why: str | None = None
    stuck = 0  # polls in a row pending for a reason it cannot start under
    while (queued := _queued(job_id)) is not None:
        state, reason = queued
        stuck = stuck + 1 if state == "PENDING" and reason in NEVER_STARTS else 0
        if deadline_s is not None and time.monotonic() - start > deadline_s:
            query(["scancel", job_id])
        elif stuck >= NEVER_STARTS_POLLS and why is None:  # not a passing state of the queue
            query(["scancel", job_id])
            why = f"it could never start here (pending: {reason}); cancelled"
        elif stop is not None and stop.requested:
            if state == "PENDING":
                query(["scancel", job_id])
            elif stop_file is not None and not stop_file.exists():
                atomic_write_text(stop_file, "stop after the current point\n")
        time.sleep(poll_s)
    return why


@dataclass(frozen=True)
class Submitted:
    job_id: str
    attached: bool = False  # a resumed run found its job still queued: its id is on record
    output_dir: Path = Path()  # where srtctl writes the job's outputs
    name: str = ""  # srtctl's job name (a recipe variant's)
    clock_from: float = field(default_factory=time.monotonic)  # start of the `slurm_job` timing


@dataclass(frozen=True)
class Ended:
    job_id: str
    state: str
    source: str  # which of Slurm's records said so
    note: str | None = None  # what inferbench did to it (a job that could never start)

    @property
    def status(self) -> JobStatus:
        if self.note is not None:
            return JobStatus.FAILED  # cancelled by us because Slurm would never run it
        return slurm_status(self.state) or JobStatus.FAILED

    @property
    def reason(self) -> str:
        text = f"Slurm job {self.job_id} ended {self.state} (from {self.source})"
        return f"{text}: {self.note}" if self.note else text


def mark_stopped(job: JobRun, result: ExecResult) -> None:
    """A job stopped on request before every point ran is incomplete, not failed."""
    if job.stop.requested and result.status in (JobStatus.CANCELLED, JobStatus.COMPLETED):
        left = {p.concurrency for p in job.todo} - {p.concurrency for p in result.points}
        if left:
            result.status = JobStatus.INTERRUPTED
            result.reason = f"stopped on request; to do: {sorted(left)}"


class QueuedExecutor(Executor):
    """A backend whose job runs in Slurm's queue; each supplies how to submit, follow and
    collect it, and what its end means."""

    refusal: ClassVar[str]  # how a refused submission's reason starts

    def run(self, job: JobRun, result: ExecResult) -> None:
        submitted = self.submit(job)
        if isinstance(submitted, str):
            raise LaunchFailure(JobStatus.SUBMIT_FAILED, f"{self.refusal}: {submitted}")
        if not submitted.attached:  # on disk first: a resumed run finds the job by it
            atomic_write_text(job.job_dir.path / JOB_ID_FILE, submitted.job_id + "\n")
            job.on_submitted(submitted.job_id)
        try:
            note = self.follow(job, submitted.job_id)
        except KeyboardInterrupt:  # the second Ctrl-C: cancel the job at once, then stop
            query(["scancel", submitted.job_id])
            raise
        state, source = final_state(submitted.job_id, job.job_dir.path)
        ended = Ended(submitted.job_id, state, source, note)
        result.slurm_job_id = submitted.job_id
        result.points = self.collect(job, submitted)
        for point in self.reported(job, result.points):
            job.on_point(point)
        self.finish(job, submitted, ended, result)
        mark_stopped(job, result)
        result.timings_s["slurm_job"] = time.monotonic() - submitted.clock_from

    @abstractmethod
    def submit(self, job: JobRun) -> Submitted | str:
        """Hand the job to the scheduler (or find it still queued); else the complaint."""

    @abstractmethod
    def follow(self, job: JobRun, job_id: str) -> str | None:
        """Return once the job has left the queue (on `job.stop`, ask it to stop early);
        say why where the job was cancelled because it could never start."""

    @abstractmethod
    def collect(self, job: JobRun, submitted: Submitted) -> list[PointOutcome]:
        """The points the job finished, their result files in the job directory."""

    def reported(self, job: JobRun, points: list[PointOutcome]) -> list[PointOutcome]:
        """The collected points to report as finished: those this attempt was to run."""
        wanted = {p.concurrency for p in job.todo}
        return [p for p in points if p.concurrency in wanted]

    @abstractmethod
    def finish(self, job: JobRun, submitted: Submitted, ended: Ended, result: ExecResult) -> None:
        """Set the result's status, reason and log tail from how the job ended."""
