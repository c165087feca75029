"""The slurm backend: submit a single-node job's sbatch script, follow it, collect results.

How the job is followed and its end read is shared with srtctl (see `slurmjob.py`).
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from inferbench.core.errors import ExternalToolError
from inferbench.core.outcome import PointOutcome
from inferbench.core.status import JobStatus, PointStatus
from inferbench.launch.execute import ExecResult, JobRun
from inferbench.launch.plan import Plan
from inferbench.launch.process import log_tail
from inferbench.launch.rundir import JobDir
from inferbench.launch.sbatch import EXIT_STATUS_FILE
from inferbench.launch.slurmjob import (
    JOB_ID_FILE,
    Ended,
    QueuedExecutor,
    Submitted,
    live_state,
    query,
    wait_in_queue,
)
from inferbench.launch.stop import STOP_FILE

INALLOC_RESULT = "inalloc-result.json"


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise ExternalToolError(
            f"{name} not found on PATH",
            hint="run on a Slurm login node, or use --backend local",
        )
    return path


def submit(argv: Sequence[str], cwd: Path) -> tuple[str | None, str]:
    """Run `sbatch --parsable ...`; the job id, or None and sbatch's complaint."""
    _tool(argv[0])
    code, out, err = query(list(argv) + [], timeout=60)
    if code != 0 or not out:
        return None, err or out or f"sbatch exited with status {code}"
    return out.split(";")[0].strip(), ""


def collect_points(plan: Plan, job_dir: JobDir) -> list[PointOutcome]:
    """Points the allocation finished: its own record, else the result files present."""
    record = job_dir.path / INALLOC_RESULT
    if record.is_file():
        data = json.loads(record.read_text())
        return [PointOutcome.model_validate(p) for p in data.get("points", [])]
    return [
        PointOutcome(
            concurrency=p.concurrency,
            status=PointStatus.PASSED,
            result_file=str(job_dir.result_file(p.concurrency).relative_to(job_dir.path)),
        )
        for p in plan.bench.points
        if job_dir.result_file(p.concurrency).is_file()
    ]


@dataclass(frozen=True)
class SlurmExecutor(QueuedExecutor):
    poll_s: float = 1.0
    deadline_s: float | None = None  # give up following (the job keeps its own time limit)
    refusal: ClassVar[str] = "sbatch refused"

    def submit(self, job: JobRun) -> Submitted | str:
        start = time.monotonic()
        id_file = job.job_dir.path / JOB_ID_FILE
        if id_file.is_file():  # a resumed run: the job may still be in the queue
            old = id_file.read_text().strip()
            if old and live_state(old) is not None:
                return Submitted(old, attached=True, clock_from=start)
        for stale in (EXIT_STATUS_FILE, INALLOC_RESULT, STOP_FILE):
            (job.job_dir.path / stale).unlink(missing_ok=True)
        job_id, err = submit(job.plan.submit, job.job_dir.path)
        return Submitted(job_id, clock_from=start) if job_id else err

    def follow(self, job: JobRun, job_id: str) -> str | None:
        stop_file = job.job_dir.path / STOP_FILE  # read by the allocation between points
        return wait_in_queue(job_id, self.poll_s, self.deadline_s, job.stop, stop_file)

    def collect(self, job: JobRun, submitted: Submitted) -> list[PointOutcome]:
        return collect_points(job.plan, job.job_dir)

    def finish(self, job: JobRun, submitted: Submitted, ended: Ended, result: ExecResult) -> None:
        """The allocation's own record where the job completed, else Slurm's word and logs."""
        record = job.job_dir.path / INALLOC_RESULT
        if ended.status is JobStatus.COMPLETED and record.is_file():
            data = json.loads(record.read_text())
            result.status = JobStatus(data["status"])
            result.reason = data.get("reason", "")
            result.log_tail = data.get("log_tail", "")
            result.base_url = data.get("base_url")
            result.timings_s.update(data.get("timings_s", {}))
            return
        logs = job.job_dir.logs
        result.status, result.reason = ended.status, ended.reason
        result.log_tail = log_tail(logs / f"slurm-{ended.job_id}.out") + log_tail(
            logs / "server.log"
        )
