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
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from inferbench.errors import ExternalToolError
from inferbench.fsio import atomic_write_bytes, atomic_write_text
from inferbench.launch.local import ExecResult, write_rendered
from inferbench.launch.outcome import JobStatus, PointOutcome, slurm_status
from inferbench.launch.plan import BenchPoint, Plan
from inferbench.launch.process import log_tail
from inferbench.launch.rundir import JobDir
from inferbench.launch.slurm import JOB_ID_FILE, final_state, live_state

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


@dataclass(frozen=True)
class Submission:
    job_id: str
    output_dir: Path


def parse_apply_json(stdout: str) -> Submission | None:
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
            return Submission(str(job_id), Path(str(data.get("output_dir") or "")))
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
        points.append(PointOutcome(concurrency=conc, ok=True, result_file=rel))
    return points


@dataclass(frozen=True)
class SrtctlExecutor:
    poll_s: float = 5.0

    def _submit(self, plan: Plan, job_dir: JobDir) -> tuple[Submission | None, str]:
        require_srtctl()
        env = {**os.environ, **plan.submit_env}
        try:
            proc = subprocess.run(
                list(plan.submit),
                cwd=job_dir.rendered,
                env=env,
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return None, str(exc)
        atomic_write_text(job_dir.logs / "srtctl-apply.log", proc.stdout + proc.stderr)
        submission = parse_apply_json(proc.stdout) if proc.returncode == 0 else None
        if submission is None:
            err = (proc.stderr or proc.stdout).strip()[-2000:]
            return None, err or f"srtctl exited with status {proc.returncode}"
        return submission, ""

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
        submission, err = self._submit(plan, job_dir)
        if submission is None:
            return ExecResult(status=JobStatus.SUBMIT_FAILED, reason=f"srtctl apply: {err}")
        atomic_write_text(job_dir.path / JOB_ID_FILE, submission.job_id + "\n")
        on_submitted(submission.job_id)
        t0 = time.monotonic()
        while live_state(submission.job_id) is not None:
            time.sleep(self.poll_s)
        state, source = final_state(submission.job_id, job_dir.path)
        points = collect_sa_bench(submission.output_dir, job_dir)
        for point in points:
            on_point(point)
        status = slurm_status(state) or JobStatus.FAILED
        missing = sorted({p.concurrency for p in todo} - {p.concurrency for p in points})
        reason = f"Slurm job {submission.job_id} ended {state} (from {source})"
        if status is JobStatus.COMPLETED and missing:
            status = JobStatus.POINTS_FAILED
            reason += f"; no sa-bench result for concurrency {', '.join(map(str, missing))}"
        tail = log_tail(submission.output_dir / "logs" / "benchmark.out")
        return ExecResult(
            status=status,
            reason="" if status is JobStatus.COMPLETED else reason,
            log_tail=tail,
            slurm_job_id=submission.job_id,
            points=points,
            timings_s={"slurm_job": time.monotonic() - t0},
        )
