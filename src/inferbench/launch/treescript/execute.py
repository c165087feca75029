"""Run a job's points through the tree's benchmark script, InferenceX's way, on this machine.

Each point is one run of the script (InferenceX runs one job per concurrency): a fresh
workspace under the job directory (`workspace/`, see stage.py) whose sa-bench shim runs
`inferbench bench` with sa-bench's argv unchanged, the script in its own process group with
the contract's environment over the caller's (secrets such as HF_TOKEN come from there), the
group killed on every way out. Kept in the job directory: `logs/script-conc<C>.log` (the
script's output), `logs/server-conc<C>.log` (the server log the script wrote), and the
result file the shim wrote as `results/conc<C>.json`. A script that fails is that point's
recorded outcome, not an exception.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from inferbench.core.outcome import PointOutcome
from inferbench.core.status import JobStatus, PointStatus
from inferbench.launch.execute import ExecResult, JobRun
from inferbench.launch.outcome import LaunchFailure
from inferbench.launch.process import log_tail
from inferbench.launch.treescript.model import ScriptCapture, ScriptPlan
from inferbench.launch.treescript.stage import map_workspace, stage_workspace
from inferbench.lifetime import child_setup

SCRIPT_TIMEOUT_S = 6 * 3600.0  # a whole point: weights, graphs, the bench (InferenceX: 500 min)
POLL_S = 0.2


def bench_shim(python: str = sys.executable) -> str:
    """utils/bench_serving/benchmark_serving.py: sa-bench's argv to `inferbench bench`."""
    return (
        '"""inferbench standing in for sa-bench: the same argv, inferbench\'s client."""\n'
        "import os\nimport sys\n\n"
        f"python = {python!r}\n"
        'os.execv(python, [python, "-m", "inferbench.cli.main", "bench", *sys.argv[1:]])\n'
    )


def _kill_group(proc: subprocess.Popen[bytes], grace_s: float) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=grace_s)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)  # the server the script left running, too
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)


def _wait(proc: subprocess.Popen[bytes], timeout_s: float) -> int | None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        code = proc.poll()
        if code is not None:
            return code
        time.sleep(POLL_S)
    return None


def _result_name(point: ScriptCapture) -> str:
    return f"{point.env.get('RESULT_FILENAME', '')}.json"


def _verdict(path: Path) -> tuple[PointStatus, str]:
    """A result file's gate verdict (inferbench's block), PASSED when it has none."""
    try:
        block = json.loads(path.read_text()).get("inferbench") or {}
    except (OSError, ValueError, AttributeError):
        return PointStatus.FAILED, f"unreadable result file {path.name}"
    if block.get("gate_failure"):
        return PointStatus.FAILED, str(block["gate_failure"])
    if block.get("complete") is False:
        return PointStatus.INCOMPLETE, f"incomplete ({block.get('incomplete_reason')})"
    return PointStatus.PASSED, ""


def run_point(
    root: Path, script: ScriptPlan, point: ScriptCapture, job: JobRun, grace_s: float
) -> PointOutcome:
    """One run of the script at `point.concurrency`; its outcome, whatever happened."""
    conc = point.concurrency
    workspace = job.job_dir.path / "workspace"
    shutil.rmtree(workspace, ignore_errors=True)
    stage_workspace(root, script.script, workspace, bench_shim())
    ws = str(workspace.resolve())
    env = {**os.environ, **{k: map_workspace(v, ws) for k, v in point.env.items()}}
    logs = job.job_dir.logs
    logs.mkdir(parents=True, exist_ok=True)
    script_log = logs / f"script-conc{conc}.log"
    with script_log.open("ab") as out:
        # the group's leader is a guard that ends the whole group if inferbench dies: the
        # parent-death signal below reaches the guard alone, not the server the script starts
        guard = [sys.executable, "-m", "inferbench.launch.groupguard", str(os.getpid())]
        proc = subprocess.Popen(
            [*guard, "bash", script.script],
            cwd=workspace,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=child_setup(signal.SIGTERM),
        )
        try:
            code = _wait(proc, SCRIPT_TIMEOUT_S)
        finally:
            _kill_group(proc, grace_s)
    server_log = workspace / "server.log"
    if server_log.is_file():
        shutil.copyfile(server_log, logs / f"server-conc{conc}.log")
    produced = workspace / _result_name(point)
    target = job.job_dir.result_file(conc)
    if produced.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(produced, target)
        status, reason = _verdict(target)
        if code not in (0, None) and status is PointStatus.PASSED:
            status, reason = PointStatus.FAILED, f"the script exited with status {code}"
        return PointOutcome(
            concurrency=conc,
            status=status,
            reason=reason,
            result_file=f"results/{target.name}",
        )
    why = (
        f"the script ran past {SCRIPT_TIMEOUT_S:g} s"
        if code is None
        else f"the script exited with status {code} without a result file"
    )
    tail = log_tail(script_log, 600).strip().splitlines()
    return PointOutcome(
        concurrency=conc,
        status=PointStatus.FAILED,
        reason=f"{why}: {tail[-1] if tail else ''}".rstrip(": "),
    )


def run_script_job(root: Path, job: JobRun, result: ExecResult, grace_s: float) -> None:
    """The points of `job` still to do, one script run each (see the module docstring)."""
    script = job.plan.script
    assert script is not None
    by_conc = {p.concurrency: p for p in script.points}
    for todo in job.todo:
        if job.stop.requested:  # the first Ctrl-C: this point and the rest stay to do
            raise LaunchFailure(
                JobStatus.INTERRUPTED, f"stopped on request before concurrency {todo.concurrency}"
            )
        t0 = time.monotonic()
        outcome = run_point(root, script, by_conc[todo.concurrency], job, grace_s)
        result.timings_s[f"conc{todo.concurrency}"] = time.monotonic() - t0
        result.points.append(outcome)
        job.on_point(outcome)
