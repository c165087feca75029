"""The srtctl backend: hand a rendered srt-slurm recipe to `srtctl apply`, follow the Slurm
job it submits, and collect the sa-bench results from `outputs/<job>/logs/`.

srtctl is not on PyPI: it is installed from the NVIDIA/srt-slurm repository. When it is not
on PATH the run stops before anything is submitted, saying how to get it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from inferbench.core.outcome import PointOutcome
from inferbench.core.status import JobStatus, PointStatus
from inferbench.errors import ExternalToolError
from inferbench.fsio import atomic_write_bytes, atomic_write_text
from inferbench.launch.execute import ExecResult, JobRun
from inferbench.launch.process import log_tail
from inferbench.launch.rundir import JobDir
from inferbench.launch.slurmjob import Ended, QueuedExecutor, Submitted, wait_in_queue

SRTCTL_HINT = (
    "srtctl is not on PyPI; install it from the NVIDIA/srt-slurm repository "
    "(git clone it, `pip install -e .` in a virtualenv, then `make setup ARCH=<arch>`) "
    "and put `srtctl` on PATH"
)
# sa-bench_isl_<I>_osl_<O>/results_concurrency_<C>_gpus_<T>[_ctx_<P>_gen_<D>].json
_RESULT = re.compile(r"^results_concurrency_(\d+)_gpus_\d+(?:_ctx_\d+_gen_\d+)?\.json$")


def require_srtctl() -> str:
    path = shutil.which("srtctl")
    if path is None:
        raise ExternalToolError("srtctl not found on PATH", hint=SRTCTL_HINT)
    return path


def parse_apply_json(stdout: str) -> Submitted | None:
    """`srtctl apply --json` prints one JSON object per submitted job; take the first."""
    for line in stdout.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            continue
        job_id = data.get("slurm_job_id") or data.get("job_id")
        if job_id:
            return Submitted(str(job_id), output_dir=Path(str(data.get("output_dir") or "")))
    return None


def collect_sa_bench(output_dir: Path, job_dir: JobDir) -> list[PointOutcome]:
    """Copy every sa-bench result under `logs/` into results/ (raw kept under results/raw/)."""
    points: list[PointOutcome] = []
    for file in sorted((output_dir / "logs").glob("sa-bench_isl_*_osl_*/results_concurrency_*")):
        match = _RESULT.match(file.name)
        if not match:
            continue
        conc = int(match.group(1))
        data = file.read_bytes()
        atomic_write_bytes(job_dir.results / "raw" / file.name, data)
        atomic_write_bytes(job_dir.result_file(conc), data)
        rel = str(job_dir.result_file(conc).relative_to(job_dir.path))
        points.append(PointOutcome(concurrency=conc, status=PointStatus.PASSED, result_file=rel))
    return points


@dataclass(frozen=True)
class SrtctlExecutor(QueuedExecutor):
    poll_s: float = 5.0
    refusal: ClassVar[str] = "srtctl apply"

    def submit(self, job: JobRun) -> Submitted | str:
        require_srtctl()
        env = {**os.environ, **job.plan.submit_env}
        try:
            proc = subprocess.run(
                list(job.plan.submit),
                cwd=job.job_dir.rendered,
                env=env,
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return str(exc)
        atomic_write_text(job.job_dir.logs / "srtctl-apply.log", proc.stdout + proc.stderr)
        submitted = parse_apply_json(proc.stdout) if proc.returncode == 0 else None
        if submitted is None:
            err = (proc.stderr or proc.stdout).strip()[-2000:]
            return err or f"srtctl exited with status {proc.returncode}"
        return submitted  # its `slurm_job` clock starts now, once applied

    def follow(self, job: JobRun, job_id: str) -> str | None:
        return wait_in_queue(job_id, self.poll_s, stop=job.stop)  # srtctl's job runs to its end

    def collect(self, job: JobRun, submitted: Submitted) -> list[PointOutcome]:
        return collect_sa_bench(submitted.output_dir, job.job_dir)

    def reported(self, job: JobRun, points: list[PointOutcome]) -> list[PointOutcome]:
        return points  # every sa-bench result the recipe left, as before

    def finish(self, job: JobRun, submitted: Submitted, ended: Ended, result: ExecResult) -> None:
        """Slurm's word, and POINTS_FAILED where a completed job left a point without result."""
        status, reason = ended.status, ended.reason
        missing = sorted({p.concurrency for p in job.todo} - {p.concurrency for p in result.points})
        if status is JobStatus.COMPLETED and missing:
            status = JobStatus.POINTS_FAILED
            reason += f"; no sa-bench result for concurrency {', '.join(map(str, missing))}"
        result.status = status
        result.reason = "" if status is JobStatus.COMPLETED else reason
        result.log_tail = log_tail(job_log(job, submitted))


def job_log(job: JobRun, submitted: Submitted) -> Path:
    """The most telling log the job left: the benchmark's, else the sbatch job's own
    (`sweep_<id>.log`, where a failed start shows), else what `srtctl apply` said."""
    logs = submitted.output_dir / "logs"
    for path in (logs / "benchmark.out", logs / f"sweep_{submitted.job_id}.log"):
        if path.is_file():
            return path
    return job.job_dir.logs / "srtctl-apply.log"
