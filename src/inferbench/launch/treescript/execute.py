"""Run a job's points through the tree's benchmark script, InferenceX's way, on this machine.

Each point is one run of the script (InferenceX runs one job per concurrency): a fresh
workspace and /tmp under the job directory (`workspace/`, `tmp/`, see stage.py) whose sa-bench
shim runs `inferbench bench` with sa-bench's argv unchanged, the script in its own process
group with the contract's environment over the caller's (secrets such as HF_TOKEN come from
there; the launchers' HF cache mount is the caller's cache) and the job's tools first on PATH
(`bin/`, see jobtools.py), the group killed on every way out. Kept in the job directory:
`logs/script-conc<C>.log` (the script's output), `logs/server-conc<C>.log` (the server log
the script wrote), and the result file the shim wrote as `results/conc<C>.json`. A script
that fails is that point's recorded outcome, not an exception.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

from inferbench.core.lifetime import child_setup
from inferbench.core.outcome import PointOutcome
from inferbench.core.status import JobStatus, PointStatus
from inferbench.launch.execute import ExecResult, JobRun
from inferbench.launch.outcome import LaunchFailure
from inferbench.launch.process import log_tail
from inferbench.launch.treescript.aiperfshim import RESULT_VAR, SYNTH_VAR, TRACE_VAR
from inferbench.launch.treescript.contract import local_env, run_mounts_for
from inferbench.launch.treescript.jobtools import write_job_tools
from inferbench.launch.treescript.model import ScriptCapture, ScriptPlan
from inferbench.launch.treescript.postprocess import process_point
from inferbench.launch.treescript.stage import stage_workspace

SOCKET_DIR_MAX = 107 - 37  # sockaddr_un's path, less a uuid file name and its slash
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


def hf_hub_cache(environ: Mapping[str, str]) -> Path:
    """The caller's Hugging Face hub cache: what the launchers mount at HF_HUB_CACHE."""
    if cache := environ.get("HF_HUB_CACHE"):
        return Path(cache)
    home = environ.get("HF_HOME") or str(Path(environ.get("HOME", "~")).expanduser() / ".cache")
    return Path(home) / ("hub" if environ.get("HF_HOME") else "huggingface/hub")


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


def point_tmp(folder: Path) -> tuple[Path, bool]:
    """The point's /tmp (and TMPDIR): `<job>/tmp`, unless its path is too long for the Unix
    sockets engines make there (vLLM's ZMQ sockets: 107 bytes with a 36-byte name); then a
    private folder of the system's temporary folder (of /tmp if that one's path is long too),
    removed after the point (True)."""
    tmp = folder / "tmp"
    if len(str(tmp.resolve())) <= SOCKET_DIR_MAX:
        return tmp, False
    system = tempfile.gettempdir()
    parent = system if len(system) + len("/ib-xxxxxxxx") <= SOCKET_DIR_MAX else "/tmp"
    return Path(tempfile.mkdtemp(prefix="ib-", dir=parent)), True


def _point_env(
    root: Path, script: ScriptPlan, point: ScriptCapture, job: JobRun, tmp: Path
) -> tuple[Path, dict[str, str]]:
    """Stage a fresh workspace and /tmp for the point; its workspace and environment."""
    folder = job.job_dir.path
    workspace = folder / "workspace"
    for old in (workspace, folder / "tmp"):
        shutil.rmtree(old, ignore_errors=True)
    mounts = run_mounts_for(point.env, workspace, tmp, hf_hub_cache(os.environ))
    stage_workspace(root, script.script, mounts, bench_shim())
    env = {**os.environ, **local_env(point.env, mounts)}
    tools = write_job_tools(folder / "bin", sys.executable, env.get("PATH", os.defpath))
    env["PATH"] = f"{tools}{os.pathsep}{env.get('PATH', os.defpath)}"
    evals = job.plan.bench.eval
    if evals is not None and evals.dataset and env.get("EVAL_TASKS_DIR"):
        # the tree's task file reading --eval-dataset, where the contract says it is
        from inferbench.evals.lmeval import prepare_task
        from inferbench.evals.spec import EvalSpec

        spec = EvalSpec(task=evals.task, dataset=Path(evals.dataset), tree=root.resolve())
        prepare_task(spec, Path(env["EVAL_TASKS_DIR"]).parent)
    agentic = job.plan.bench.agentic
    if agentic is not None:  # what the aiperf stand-in replays, and where its result goes
        env[RESULT_VAR] = str(job.job_dir.result_file(point.concurrency))
        env[TRACE_VAR] = agentic.trace or ""
        env[SYNTH_VAR] = agentic.synth
    return workspace, env


def _run_script(
    script: ScriptPlan, workspace: Path, env: dict[str, str], log: Path, grace_s: float
) -> int | None:
    with log.open("ab") as out:
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
            return _wait(proc, SCRIPT_TIMEOUT_S)
        finally:
            _kill_group(proc, grace_s)


def run_point(
    root: Path, script: ScriptPlan, point: ScriptCapture, job: JobRun, grace_s: float
) -> PointOutcome:
    """One run of the script at `point.concurrency`, then the workflow's processing of its
    outputs (postprocess.py); its outcome, whatever happened."""
    conc = point.concurrency
    tmp, private = point_tmp(job.job_dir.path)
    logs = job.job_dir.logs
    logs.mkdir(parents=True, exist_ok=True)
    script_log = logs / f"script-conc{conc}.log"
    try:
        workspace, env = _point_env(root, script, point, job, tmp)
        if private:
            with script_log.open("a") as out:
                out.write(f"inferbench: /tmp is {tmp} (removed after the point): the job's own")
                out.write(" tmp folder has too long a path for the engine's Unix sockets\n")
        code = _run_script(script, workspace, env, script_log, grace_s)
        return _outcome(point, job, workspace, env, code)
    finally:
        if private:
            shutil.rmtree(tmp, ignore_errors=True)


def _outcome(
    point: ScriptCapture, job: JobRun, workspace: Path, env: dict[str, str], code: int | None
) -> PointOutcome:
    """The point's outcome from what the script left, after the workflow's processing."""
    conc = point.concurrency
    logs = job.job_dir.logs
    script_log = logs / f"script-conc{conc}.log"
    for server_log in (workspace / "server.log", workspace / "results" / "server.log"):
        if server_log.is_file():  # fixed-seq-len scripts log there, agentic ones in RESULT_DIR
            shutil.copyfile(server_log, logs / f"server-conc{conc}.log")
    target = job.job_dir.result_file(conc)
    process_log = logs / f"process-conc{conc}.log"
    if point.env.get("EVAL_ONLY") == "true":  # no throughput point: the evals are the outcome
        processed = process_point(workspace, env, target.parent, process_log, conc)
        failure = processed.failure or (f"the script exited with status {code}" if code else "")
        agg = target.parent / f"agg_eval_conc{conc}.json"
        return PointOutcome(
            concurrency=conc,
            status=PointStatus.FAILED if failure else PointStatus.PASSED,
            reason=failure,
            result_file=f"results/{agg.name}" if agg.is_file() else None,
        )
    # agentic: the aiperf stand-in wrote inferbench's result there; the script's own
    # <RESULT_FILENAME>.json is InferenceX's aggregate, which the processing keeps
    produced = target if job.plan.bench.agentic is not None else workspace / _result_name(point)
    if not produced.is_file():
        why = (
            f"the script ran past {SCRIPT_TIMEOUT_S:g} s"
            if code is None
            else f"the script exited with status {code} without a result file"
        )
        tail = log_tail(script_log, 600).strip().splitlines()
        reason = f"{why}: {tail[-1] if tail else ''}".rstrip(": ")
        return PointOutcome(concurrency=conc, status=PointStatus.FAILED, reason=reason)
    if produced != target:
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(produced, target)
    status, reason = _verdict(target)
    if code not in (0, None) and status is PointStatus.PASSED:
        status, reason = PointStatus.FAILED, f"the script exited with status {code}"
    processed = process_point(workspace, env, target.parent, process_log, conc)
    if processed.failure and status is PointStatus.PASSED:
        status, reason = PointStatus.FAILED, processed.failure
    return PointOutcome(
        concurrency=conc, status=status, reason=reason, result_file=f"results/{target.name}"
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
