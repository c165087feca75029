"""The slurm backend: submit a single-node job's sbatch script, follow it, collect results.

States come from `squeue` while the job lives, then `scontrol show job` (kept for MinJobAge),
then `sacct` where accounting is on, and last from the script's own exit-status file.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from inferbench.errors import ExternalToolError
from inferbench.fsio import atomic_write_text
from inferbench.launch.local import ExecResult, write_rendered
from inferbench.launch.outcome import JobStatus, PointOutcome, slurm_status
from inferbench.launch.plan import BenchPoint, Plan
from inferbench.launch.process import log_tail
from inferbench.launch.rundir import JobDir
from inferbench.launch.sbatch import EXIT_STATUS_FILE

JOB_ID_FILE = "slurm-job-id"
INALLOC_RESULT = "inalloc-result.json"


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise ExternalToolError(
            f"{name} not found on PATH",
            hint="run on a Slurm login node, or use --backend local",
        )
    return path


def _out(argv: list[str], timeout: float = 30.0) -> tuple[int, str, str]:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return 1, "", str(exc)
    return proc.returncode, proc.stdout.strip(), proc.stderr.strip()


def submit(argv: Sequence[str], cwd: Path) -> tuple[str | None, str]:
    """Run `sbatch --parsable ...`; the job id, or None and sbatch's complaint."""
    _tool(argv[0])
    code, out, err = _out(list(argv) + [], timeout=60)
    if code != 0 or not out:
        return None, err or out or f"sbatch exited with status {code}"
    return out.split(";")[0].strip(), ""


def live_state(job_id: str) -> str | None:
    """The state while `squeue` still lists the job, else None."""
    code, out, _ = _out(["squeue", "-h", "-j", job_id, "-o", "%T"])
    return out.splitlines()[0].strip() if code == 0 and out else None


def final_state(job_id: str, job_dir: Path) -> tuple[str, str]:
    """(state, where it came from) once the job has left the queue."""
    code, out, _ = _out(["scontrol", "-o", "show", "job", job_id])
    if code == 0 and "JobState=" in out:
        return out.split("JobState=", 1)[1].split()[0], "scontrol"
    code, out, _ = _out(["sacct", "-n", "-X", "-P", "-j", job_id, "-o", "State"])
    if code == 0 and out and "disabled" not in out:
        return out.splitlines()[0].strip(), "sacct"
    status_file = job_dir / EXIT_STATUS_FILE
    if status_file.is_file():
        rc = status_file.read_text().strip()
        return ("COMPLETED" if rc == "0" else "FAILED"), "exit-status file"
    return "FAILED", "no record (the job left no exit-status file)"


def collect_points(plan: Plan, job_dir: JobDir) -> list[PointOutcome]:
    """Points the allocation finished: its own record, else the result files present."""
    record = job_dir.path / INALLOC_RESULT
    if record.is_file():
        data = json.loads(record.read_text())
        return [PointOutcome.model_validate(p) for p in data.get("points", [])]
    return [
        PointOutcome(
            concurrency=p.concurrency,
            ok=True,
            result_file=str(job_dir.result_file(p.concurrency).relative_to(job_dir.path)),
        )
        for p in plan.bench.points
        if job_dir.result_file(p.concurrency).is_file()
    ]


@dataclass(frozen=True)
class SlurmExecutor:
    poll_s: float = 1.0
    deadline_s: float | None = None  # give up following (the job keeps its own time limit)

    def _follow(self, job_id: str) -> None:
        start = time.monotonic()
        while live_state(job_id) is not None:
            if self.deadline_s is not None and time.monotonic() - start > self.deadline_s:
                _out(["scancel", job_id])
            time.sleep(self.poll_s)

    def _attach_or_submit(
        self, plan: Plan, job_dir: JobDir, on_submitted: Callable[[str | None], None]
    ) -> tuple[str | None, str]:
        id_file = job_dir.path / JOB_ID_FILE
        if id_file.is_file():  # a resumed run: the job may still be in the queue
            old = id_file.read_text().strip()
            if old and live_state(old) is not None:
                return old, ""
        for stale in (EXIT_STATUS_FILE, INALLOC_RESULT):
            (job_dir.path / stale).unlink(missing_ok=True)
        job_id, err = submit(plan.submit, job_dir.path)
        if job_id:
            atomic_write_text(id_file, job_id + "\n")
            on_submitted(job_id)
        return job_id, err

    def execute(
        self,
        plan: Plan,
        job_dir: JobDir,
        todo: Sequence[BenchPoint],
        on_point: Callable[[PointOutcome], None],
        on_submitted: Callable[[str | None], None],
    ) -> ExecResult:
        job_dir.make()
        write_rendered(plan, job_dir)
        t0 = time.monotonic()
        job_id, err = self._attach_or_submit(plan, job_dir, on_submitted)
        if job_id is None:
            return ExecResult(status=JobStatus.SUBMIT_FAILED, reason=f"sbatch refused: {err}")
        self._follow(job_id)
        state, source = final_state(job_id, job_dir.path)
        points = collect_points(plan, job_dir)
        wanted = {p.concurrency for p in todo}
        for point in points:
            if point.concurrency in wanted:
                on_point(point)
        result = _result(job_id, state, source, points, job_dir)
        result.timings_s["slurm_job"] = time.monotonic() - t0
        return result


def _result(
    job_id: str, state: str, source: str, points: list[PointOutcome], job_dir: JobDir
) -> ExecResult:
    status = slurm_status(state) or JobStatus.FAILED
    tail = log_tail(job_dir.logs / f"slurm-{job_id}.out") + log_tail(job_dir.logs / "server.log")
    inalloc = job_dir.path / INALLOC_RESULT
    if status is JobStatus.COMPLETED and inalloc.is_file():
        data = json.loads(inalloc.read_text())
        return ExecResult(
            status=JobStatus(data["status"]),
            reason=data.get("reason", ""),
            log_tail=data.get("log_tail", ""),
            base_url=data.get("base_url"),
            slurm_job_id=job_id,
            points=points,
            timings_s=dict(data.get("timings_s", {})),
        )
    reason = f"Slurm job {job_id} ended {state} (from {source})"
    return ExecResult(
        status=status, reason=reason, log_tail=tail, slurm_job_id=job_id, points=points
    )
