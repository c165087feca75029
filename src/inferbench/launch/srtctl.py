"""The srtctl backend: hand a rendered srt-slurm recipe to `srtctl apply`, follow the Slurm
jobs it submits (one per variant of a recipe file with several), and collect the sa-bench
results from each one's `outputs/<job>/logs/`.

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
from dataclasses import dataclass
from pathlib import Path

from inferbench.core.errors import ExternalToolError
from inferbench.core.fsio import atomic_write_bytes, atomic_write_text
from inferbench.core.outcome import PointOutcome, SlurmJobRecord
from inferbench.core.status import JobStatus, PointStatus
from inferbench.launch.execute import ExecResult, Executor, JobRun
from inferbench.launch.outcome import LaunchFailure
from inferbench.launch.process import log_tail
from inferbench.launch.rundir import JobDir
from inferbench.launch.slurmjob import (
    JOB_ID_FILE,
    Ended,
    Submitted,
    final_state,
    mark_stopped,
    query,
    wait_in_queue,
)

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


def parse_apply_json(stdout: str) -> list[Submitted]:
    """`srtctl apply --json` prints one JSON object per submitted job (one per variant of a
    recipe file with several); every one, in order."""
    jobs: list[Submitted] = []
    for data in _json_lines(stdout):
        job_id = data.get("slurm_job_id") or data.get("job_id")
        if job_id:
            output_dir = Path(str(data.get("output_dir") or ""))
            jobs.append(Submitted(str(job_id), output_dir=output_dir, name=_name(data)))
    return jobs


def _name(data: dict[str, object]) -> str:
    return str(data.get("job_name") or "")


def _json_lines(stdout: str) -> list[dict[str, object]]:
    out = []
    for line in stdout.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict):
            out.append(data)
    return out


def apply_error(stdout: str) -> str:
    """srtctl's own reason, from its `{"status": "error", "error": ...}` line."""
    for data in _json_lines(stdout):
        if data.get("status") == "error" and data.get("error"):
            return str(data["error"])
    return ""


def submitted_on_disk(outputs: Path) -> list[str]:
    """Jobs srtctl submitted before it failed: it writes `<outputs>/<id>/<id>.json` right after
    sbatch accepts a job, but prints the JSON lines only at the end, and not after an error."""
    if not outputs.is_dir():
        return []
    return sorted(
        (d.name for d in outputs.iterdir() if d.is_dir() and (d / f"{d.name}.json").is_file()),
        key=lambda name: (len(name), name),
    )


def collect_sa_bench(
    output_dir: Path, job_dir: JobDir, *, raw: str = "", taken: frozenset[int] = frozenset()
) -> list[PointOutcome]:
    """Copy every sa-bench result under `logs/` into results/ (raw kept under results/raw/,
    in `raw/<raw>/` when given: one folder per Slurm job of a multi-job deployment). A
    concurrency in `taken` (an earlier job of the same deployment ran it) keeps the earlier
    result; this one stays in raw/."""
    points: list[PointOutcome] = []
    for file in sorted((output_dir / "logs").glob("sa-bench_isl_*_osl_*/results_concurrency_*")):
        match = _RESULT.match(file.name)
        if not match:
            continue
        conc = int(match.group(1))
        data = file.read_bytes()
        atomic_write_bytes(job_dir.results / "raw" / raw / file.name, data)
        if conc in taken:
            continue
        atomic_write_bytes(job_dir.result_file(conc), data)
        rel = str(job_dir.result_file(conc).relative_to(job_dir.path))
        points.append(PointOutcome(concurrency=conc, status=PointStatus.PASSED, result_file=rel))
    return points


def _outputs_dir(job: JobRun) -> Path:
    submit = list(job.plan.submit)
    if "-o" in submit[:-1]:
        return Path(submit[submit.index("-o") + 1])
    return job.job_dir.path / "srtctl-outputs"


@dataclass(frozen=True)
class SrtctlExecutor(Executor):
    """`srtctl apply` the rendered recipe, then follow every Slurm job it submitted (one per
    variant of a recipe file with several) until each has left the queue; the job's points
    are the sa-bench results all of them left, its status the first that did not complete."""

    poll_s: float = 5.0

    def run(self, job: JobRun, result: ExecResult) -> None:
        jobs = self.submit(job)
        if isinstance(jobs, str):
            raise LaunchFailure(JobStatus.SUBMIT_FAILED, f"srtctl apply: {jobs}")
        ids = [s.job_id for s in jobs]
        atomic_write_text(job.job_dir.path / JOB_ID_FILE, "".join(i + "\n" for i in ids))
        for job_id in ids:
            job.on_submitted(job_id)
        notes: dict[str, str | None] = {}
        try:
            for job_id in ids:  # they run side by side in the queue; each is waited for
                notes[job_id] = wait_in_queue(job_id, self.poll_s, stop=job.stop)
        except KeyboardInterrupt:  # the second Ctrl-C: cancel them at once, then stop
            query(["scancel", *ids])
            raise
        ended = [Ended(i, *final_state(i, job.job_dir.path), notes[i]) for i in ids]
        result.slurm_job_id = ids[0]
        taken: set[int] = set()
        for sub, end in zip(jobs, ended, strict=True):
            raw = sub.job_id if len(jobs) > 1 else ""
            found = collect_sa_bench(sub.output_dir, job.job_dir, raw=raw, taken=frozenset(taken))
            taken |= {p.concurrency for p in found}
            result.points += found
            result.slurm_jobs.append(_record(sub, end, found))
        for point in result.points:  # every sa-bench result the recipe left
            job.on_point(point)
        evals = job.plan.bench.eval
        if evals is not None:  # srt-slurm's post-benchmark lm-eval (launch/srtevals.py)
            from inferbench.launch.srtevals import collect_evals

            dirs = [sub.output_dir for sub in jobs]
            collect_evals(dirs, job.job_dir, evals, job.plan.bench.model, ids[0])
        self.finish(job, jobs, ended, result)
        mark_stopped(job, result)
        result.timings_s["slurm_job"] = time.monotonic() - jobs[0].clock_from

    def submit(self, job: JobRun) -> list[Submitted] | str:
        """The jobs `srtctl apply` submitted, else its complaint (jobs it had submitted
        before it failed are cancelled: the deployment was not submitted whole)."""
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
        jobs = parse_apply_json(proc.stdout) if proc.returncode == 0 else []
        if not jobs:
            err = apply_error(proc.stdout) or (proc.stderr or proc.stdout).strip()[-2000:]
            err = err or f"srtctl exited with status {proc.returncode}"
            partial = submitted_on_disk(_outputs_dir(job))
            if partial:
                query(["scancel", *partial])
                err += f" (cancelled the jobs it had submitted: {', '.join(partial)})"
            return err
        return jobs  # their `slurm_job` clock starts now, once applied

    def finish(
        self, job: JobRun, jobs: list[Submitted], ended: list[Ended], result: ExecResult
    ) -> None:
        """Slurm's word on each job, and POINTS_FAILED where they completed but left a point
        of the plan without result."""
        failed = [
            (s, e) for s, e in zip(jobs, ended, strict=True) if e.status is not JobStatus.COMPLETED
        ]
        status = failed[0][1].status if failed else JobStatus.COMPLETED
        reason = "; ".join(e.reason for e in ended)
        missing = sorted({p.concurrency for p in job.todo} - {p.concurrency for p in result.points})
        if status is JobStatus.COMPLETED and missing:
            status = JobStatus.POINTS_FAILED
            reason += f"; no sa-bench result for concurrency {', '.join(map(str, missing))}"
        result.status = status
        result.reason = "" if status is JobStatus.COMPLETED else reason
        telling = failed[0][0] if failed else jobs[0]
        result.log_tail = log_tail(job_log(job, telling))


def _record(sub: Submitted, end: Ended, found: list[PointOutcome]) -> SlurmJobRecord:
    return SlurmJobRecord(
        job_id=sub.job_id,
        name=sub.name,
        state=end.state,
        source=end.source,
        note=end.note or "",
        output_dir=str(sub.output_dir),
        concurrencies=tuple(sorted(p.concurrency for p in found)),
    )


def job_log(job: JobRun, submitted: Submitted) -> Path:
    """The most telling log the job left: the benchmark's, else the sbatch job's own
    (`sweep_<id>.log`, where a failed start shows), else what `srtctl apply` said."""
    logs = submitted.output_dir / "logs"
    for path in (logs / "benchmark.out", logs / f"sweep_{submitted.job_id}.log"):
        if path.is_file():
            return path
    return job.job_dir.logs / "srtctl-apply.log"
