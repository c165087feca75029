"""The Slurm-queued backends (sbatch, srtctl) against stand-in scheduler tools on PATH: the
outcome of a refused, finished, cancelled or resumed job, its recorded id and kept results.
The real-Slurm runs are in tests/integration/test_slurm.py."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Sequence
from pathlib import Path

import pytest

from inferbench.core.outcome import PointOutcome
from inferbench.core.status import JobStatus
from inferbench.launch.execute import ExecResult, Executor
from inferbench.launch.plan import Backend, BenchPoint, Plan, RenderedFile
from inferbench.launch.rundir import JobDir
from inferbench.launch.slurm import INALLOC_RESULT, SlurmExecutor
from inferbench.launch.srtctl import SrtctlExecutor

from .conftest import server_plan

# Each stand-in reads its behaviour from a file the test writes (state in $FAKE).
TOOLS = {
    "sbatch": 'cat "$FAKE/sbatch" 2>/dev/null; echo called >> "$FAKE/sbatch.calls"\n'
    'exit "$(cat "$FAKE/sbatch.rc" 2>/dev/null || echo 0)"',
    # live while $FAKE/queued holds a count above zero; each call counts one down
    "squeue": '[ -f "$FAKE/record.to" ] && cp "$FAKE/record" "$(cat "$FAKE/record.to")"\n'
    'n=$(cat "$FAKE/queued" 2>/dev/null || echo 0)\n'
    'if [ "$n" -gt 0 ]; then echo $((n - 1)) > "$FAKE/queued"; echo RUNNING; fi',
    "scontrol": 'echo "JobId=$4 JobState=$(cat "$FAKE/state") Reason=None"',
    "sacct": "exit 1",
    "scancel": 'echo "$@" >> "$FAKE/scancel.calls"',
    "srtctl": 'echo "$PWD" > "$FAKE/srtctl.cwd"; env > "$FAKE/srtctl.env"\n'
    'cat "$FAKE/srtctl.out"; cat "$FAKE/srtctl.err" >&2 2>/dev/null\n'
    'exit "$(cat "$FAKE/srtctl.rc" 2>/dev/null || echo 0)"',
}


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    state = tmp_path / "fake"
    bin_dir = state / "bin"
    bin_dir.mkdir(parents=True)
    for name, body in TOOLS.items():
        tool = bin_dir / name
        tool.write_text("#!/bin/sh\n" + body + "\n")
        tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE", str(state))
    (state / "state").write_text("COMPLETED\n")
    return state


def _plan(backend: Backend, submit: tuple[str, ...], concs: tuple[int, ...] = (1, 2)) -> Plan:
    files = (RenderedFile(name="sbatch.sh", content="#!/bin/bash\n", executable=True),)
    return server_plan(concs=concs).model_copy(
        update={"backend": backend, "submit": submit, "files": files, "submit_env": {"X": "1"}}
    )


class Recorder:
    def __init__(self) -> None:
        self.points: list[PointOutcome] = []
        self.ids: list[str | None] = []


def _run(
    executor: Executor, plan: Plan, job: JobDir, todo: Sequence[BenchPoint] | None = None
) -> tuple[ExecResult, Recorder]:
    seen = Recorder()
    points = plan.bench.points if todo is None else todo
    result = executor.execute(plan, job, points, seen.points.append, seen.ids.append)
    return result, seen


def _say(fake: Path, **files: str) -> None:
    """What the stand-ins answer next (`sbatch_rc` is the file `sbatch.rc`)."""
    for name, text in files.items():
        (fake / name.replace("_", ".")).write_text(text)


# --- sbatch ---


def test_sbatch_refused_is_a_submit_failure_with_the_files_written(
    fake: Path, tmp_path: Path
) -> None:
    _say(fake, sbatch="sbatch: error: invalid partition specified\n", sbatch_rc="1\n")
    job = JobDir(tmp_path / "job")
    result, seen = _run(SlurmExecutor(poll_s=0), _plan(Backend.SLURM, ("sbatch",)), job)
    assert result.status is JobStatus.SUBMIT_FAILED
    assert result.reason == "sbatch refused: sbatch: error: invalid partition specified"
    assert result.points == [] and result.slurm_job_id is None
    assert result.timings_s == {}
    assert seen.ids == [] and not (job.path / "slurm-job-id").exists()
    assert os.access(job.rendered / "sbatch.sh", os.X_OK)
    assert job.logs.is_dir() and job.results.is_dir()


def test_sbatch_job_completed_takes_the_allocations_record(fake: Path, tmp_path: Path) -> None:
    _say(fake, sbatch="41;cluster\n", queued="2\n")
    job = JobDir(tmp_path / "job")
    plan = _plan(Backend.SLURM, ("sbatch", "--parsable"))

    # stale files of an earlier attempt are removed before submitting; the allocation then
    # writes its record while the job is queued (the stand-in squeue plays that part)
    job.make()
    (job.path / INALLOC_RESULT).write_text('{"status": "failed"}')
    (job.path / "exit-status").write_text("1\n")
    record = {
        "status": "completed",
        "reason": "",
        "log_tail": "",
        "base_url": "http://node:8000",
        "points": [{"concurrency": 2, "ok": True, "result_file": "results/conc2.json"}],
        "timings_s": {"bench": 1.5},
    }
    _say(fake, record=json.dumps(record), record_to=str(job.path / INALLOC_RESULT))
    todo = plan.bench.points[1:]  # conc 1 finished in an earlier attempt
    result, seen = _run(SlurmExecutor(poll_s=0), plan, job, todo)
    assert not (job.path / "exit-status").exists()
    assert result.status is JobStatus.COMPLETED
    assert result.base_url == "http://node:8000" and result.slurm_job_id == "41"
    assert list(result.timings_s) == ["bench", "slurm_job"]
    assert [p.concurrency for p in seen.points] == [2] and seen.ids == ["41"]
    assert (job.path / "slurm-job-id").read_text() == "41\n"


def test_sbatch_job_cancelled_keeps_the_finished_results_and_log_tails(
    fake: Path, tmp_path: Path
) -> None:
    _say(fake, sbatch="42\n", state="CANCELLED\n")
    job = JobDir(tmp_path / "job")
    job.make()
    job.result_file(1).write_text("{}")  # written by the allocation before it was killed
    (job.logs / "slurm-42.out").write_text("slurmstepd: CANCELLED\n")
    (job.logs / "server.log").write_text("engine: serving\n")
    plan = _plan(Backend.SLURM, ("sbatch",))
    result, seen = _run(SlurmExecutor(poll_s=0), plan, job, plan.bench.points[:1])
    assert result.status is JobStatus.CANCELLED
    assert result.reason == "Slurm job 42 ended CANCELLED (from scontrol)"
    assert "slurmstepd: CANCELLED" in result.log_tail and "engine: serving" in result.log_tail
    assert [(p.concurrency, p.ok) for p in result.points] == [(1, True)]
    assert [p.concurrency for p in seen.points] == [1]
    assert list(result.timings_s) == ["slurm_job"]


def test_resumed_sbatch_job_still_queued_is_followed_not_resubmitted(
    fake: Path, tmp_path: Path
) -> None:
    _say(fake, queued="3\n")
    job = JobDir(tmp_path / "job")
    job.make()
    (job.path / "slurm-job-id").write_text("40\n")
    (job.path / "exit-status").write_text("0\n")  # the live job's own files are not touched
    result, seen = _run(SlurmExecutor(poll_s=0), _plan(Backend.SLURM, ("sbatch",)), job)
    assert not (fake / "sbatch.calls").exists()
    assert seen.ids == []  # already recorded by the attempt that submitted it
    assert result.slurm_job_id == "40" and result.status is JobStatus.COMPLETED
    assert (job.path / "exit-status").is_file()


# --- srtctl ---


def _apply_output(fake: Path, job_id: str, concs: tuple[int, ...]) -> Path:
    out = fake / "outputs" / job_id
    bench = out / "logs" / "sa-bench_isl_8_osl_8"
    bench.mkdir(parents=True)
    for conc in concs:
        (bench / f"results_concurrency_{conc}_gpus_8.json").write_text(f'{{"c": {conc}}}')
    (out / "logs" / "benchmark.out").write_text("sa-bench: done\n")
    line = json.dumps({"status": "submitted", "slurm_job_id": job_id, "output_dir": str(out)})
    (fake / "srtctl.out").write_text("Submitting...\n" + line + "\n")
    return out


def test_srtctl_job_completed_collects_every_sa_bench_result(fake: Path, tmp_path: Path) -> None:
    _apply_output(fake, "77", (1, 2))
    _say(fake, queued="1\n")
    job = JobDir(tmp_path / "job")
    plan = _plan(Backend.SRTCTL, ("srtctl", "apply", "--json"))
    result, seen = _run(SrtctlExecutor(poll_s=0), plan, job, plan.bench.points[1:])
    assert result.status is JobStatus.COMPLETED and result.reason == ""
    assert result.slurm_job_id == "77" and seen.ids == ["77"]
    assert (job.path / "slurm-job-id").read_text() == "77\n"
    assert [p.concurrency for p in seen.points] == [1, 2]  # every result it found is reported
    assert json.loads(job.result_file(2).read_text()) == {"c": 2}
    assert (job.results / "raw" / "results_concurrency_1_gpus_8.json").is_file()
    assert result.log_tail == "sa-bench: done\n"
    assert list(result.timings_s) == ["slurm_job"]
    assert (fake / "srtctl.cwd").read_text().strip() == str(job.rendered)
    assert "X=1" in (fake / "srtctl.env").read_text().splitlines()
    assert "Submitting..." in (job.logs / "srtctl-apply.log").read_text()


def test_srtctl_job_missing_a_result_is_points_failed(fake: Path, tmp_path: Path) -> None:
    _apply_output(fake, "78", (1,))
    job = JobDir(tmp_path / "job")
    result, _ = _run(SrtctlExecutor(poll_s=0), _plan(Backend.SRTCTL, ("srtctl",)), job)
    assert result.status is JobStatus.POINTS_FAILED
    assert result.reason == (
        "Slurm job 78 ended COMPLETED (from scontrol); no sa-bench result for concurrency 2"
    )


def test_srtctl_job_timed_out_keeps_what_it_finished(fake: Path, tmp_path: Path) -> None:
    _apply_output(fake, "79", (1,))
    _say(fake, state="TIMEOUT\n")
    job = JobDir(tmp_path / "job")
    result, seen = _run(SrtctlExecutor(poll_s=0), _plan(Backend.SRTCTL, ("srtctl",)), job)
    assert result.status is JobStatus.TIMEOUT
    assert result.reason == "Slurm job 79 ended TIMEOUT (from scontrol)"
    assert [p.concurrency for p in seen.points] == [1] and job.result_file(1).is_file()


def test_srtctl_apply_refused_is_a_submit_failure(fake: Path, tmp_path: Path) -> None:
    _say(fake, srtctl_out="", srtctl_err="recipe invalid: model.path\n", srtctl_rc="2\n")
    job = JobDir(tmp_path / "job")
    result, seen = _run(SrtctlExecutor(poll_s=0), _plan(Backend.SRTCTL, ("srtctl",)), job)
    assert result.status is JobStatus.SUBMIT_FAILED
    assert result.reason == "srtctl apply: recipe invalid: model.path"
    assert result.timings_s == {} and seen.ids == []
    assert not (job.path / "slurm-job-id").exists()
    assert "recipe invalid" in (job.logs / "srtctl-apply.log").read_text()
    assert (job.rendered / "sbatch.sh").is_file()


def _apply_jobs(fake: Path, jobs: dict[str, tuple[int, ...]]) -> None:
    """`srtctl apply --json` of a recipe file with several variants: one line per job."""
    lines = []
    for job_id, concs in jobs.items():
        out = fake / "outputs" / job_id
        bench = out / "logs" / "sa-bench_isl_8_osl_8"
        bench.mkdir(parents=True)
        for conc in concs:
            (bench / f"results_concurrency_{conc}_gpus_8.json").write_text(f'{{"job": {job_id}}}')
        record = {"status": "submitted", "slurm_job_id": job_id, "output_dir": str(out)}
        lines.append(json.dumps({**record, "job_name": f"variant-{job_id}"}))
    (fake / "srtctl.out").write_text("\n".join(lines) + "\n")


def test_srtctl_every_job_of_a_multi_variant_file_is_followed(fake: Path, tmp_path: Path) -> None:
    _apply_jobs(fake, {"91": (1,), "92": (2,), "93": ()})
    job = JobDir(tmp_path / "job")
    result, seen = _run(SrtctlExecutor(poll_s=0), _plan(Backend.SRTCTL, ("srtctl",)), job)
    assert result.status is JobStatus.COMPLETED and result.reason == ""
    assert seen.ids == ["91", "92", "93"]
    assert (job.path / "slurm-job-id").read_text() == "91\n92\n93\n"
    assert [(j.job_id, j.name, j.state, j.concurrencies) for j in result.slurm_jobs] == [
        ("91", "variant-91", "COMPLETED", (1,)),
        ("92", "variant-92", "COMPLETED", (2,)),
        ("93", "variant-93", "COMPLETED", ()),
    ]
    assert [p.concurrency for p in seen.points] == [1, 2]
    assert json.loads(job.result_file(2).read_text()) == {"job": 92}
    assert (job.results / "raw" / "92" / "results_concurrency_2_gpus_8.json").is_file()


def test_srtctl_a_failed_variant_fails_the_deployment(fake: Path, tmp_path: Path) -> None:
    """Two variants ran concurrency 1: the first one's result is the point, both are kept."""
    _apply_jobs(fake, {"94": (1,), "95": (1,)})
    _say(fake, state="FAILED\n")
    job = JobDir(tmp_path / "job")
    result, _ = _run(SrtctlExecutor(poll_s=0), _plan(Backend.SRTCTL, ("srtctl",)), job)
    assert result.status is JobStatus.FAILED
    assert result.reason == (
        "Slurm job 94 ended FAILED (from scontrol); Slurm job 95 ended FAILED (from scontrol)"
    )
    assert json.loads(job.result_file(1).read_text()) == {"job": 94}
    assert (job.results / "raw" / "95" / "results_concurrency_1_gpus_8.json").is_file()
    assert [j.concurrencies for j in result.slurm_jobs] == [(1,), ()]


def test_srtctl_failing_after_submitting_some_jobs_cancels_them(fake: Path, tmp_path: Path) -> None:
    """srtctl prints its JSON lines only at the end; the jobs it had submitted before an error
    are found by the metadata it writes beside each and cancelled."""
    outputs = tmp_path / "outputs"
    (outputs / "96").mkdir(parents=True)
    (outputs / "96" / "96.json").write_text("{}")
    error = json.dumps({"status": "error", "error": "sbatch: partition down"})
    _say(fake, srtctl_out=error + "\n", srtctl_rc="1\n")
    job = JobDir(tmp_path / "job")
    plan = _plan(Backend.SRTCTL, ("srtctl", "apply", "--json", "-o", str(outputs)))
    result, seen = _run(SrtctlExecutor(poll_s=0), plan, job)
    assert result.status is JobStatus.SUBMIT_FAILED and seen.ids == []
    assert result.reason == (
        "srtctl apply: sbatch: partition down (cancelled the jobs it had submitted: 96)"
    )
    assert (fake / "scancel.calls").read_text() == "96\n"
