"""`inferbench run` as a user runs it, for the stop/resume tests: a small tree, the CLI in a
subprocess, and what to read back from the run directory (points measured, live servers)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from inferbench.launch.state import RunState

_MASTER = """\
llama3.1-8b-bf16-h200-vllm:
  image: vllm/vllm-openai:v0.10.2
  model: meta-llama/Llama-3.1-8B-Instruct
  model-prefix: llama3.1-8b
  runner: h200
  precision: bf16
  framework: vllm
  multinode: false
  scenarios:
    fixed-seq-len:
      - isl: 128
        osl: {osl}
        search-space:
          - {{tp: 1, conc-list: [1, 2, 4]}}
      - isl: 256
        osl: {osl}
        search-space:
          - {{tp: 1, conc-list: [1, 2, 4]}}
"""
_RUNNERS = """\
labels:
  h200: [h200-nv_0]
hardware:
  h200: {gpus-per-node: 8, available-cpu-dram-mib: 1900000}
"""
_CHANGELOG = """\
- config-keys: [llama3.1-8b-bf16-h200-vllm]
  description: ["two small curves for the stop/resume tests"]
  pr-link: https://example.org/pull/1
"""
POINTS = 6  # two deployments of three concurrencies
_DONE = re.compile(r"^done conc=(\d+) ")


def tiny_tree(root: Path, osl: int = 256) -> Path:
    """Two single-node curves (3 points each) the simulator serves in about a second a point."""
    (root / "configs").mkdir(parents=True)
    (root / "configs" / "nvidia-master.yaml").write_text(_MASTER.format(osl=osl))
    (root / "configs" / "runners.yaml").write_text(_RUNNERS)
    (root / "perf-changelog.yaml").write_text(_CHANGELOG)
    return root


def start(cwd: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "inferbench.cli.main", "run", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    )


def finish(proc: subprocess.Popen[str], timeout: float = 240) -> tuple[int, str]:
    out, _ = proc.communicate(timeout=timeout)
    return proc.returncode, out


def the_run(runs: Path) -> Path:
    (run,) = [p for p in runs.iterdir() if p.is_dir()]
    return run


def measured(run: Path) -> Counter[tuple[str, int]]:
    """(job, concurrency) -> how many times a point was measured to its end (client logs)."""
    counts: Counter[tuple[str, int]] = Counter()
    for log in run.glob("*/logs/client.log"):
        for line in log.read_text().splitlines():
            if m := _DONE.match(line):
                counts[(log.parent.parent.name, int(m.group(1)))] += 1
    return counts


def started(run: Path) -> int:
    """Points whose bench started (finished or not)."""
    return sum(
        line.startswith("bench ")
        for log in run.glob("*/logs/client.log")
        for line in log.read_text().splitlines()
    )


def wait_for(predicate: object, timeout: float = 120, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def mid_point(runs: Path, after_done: int) -> bool:
    """True once `after_done` points are measured and the next one has started."""
    dirs = [p for p in runs.iterdir() if p.is_dir()] if runs.is_dir() else []
    if len(dirs) != 1:
        return False
    done = sum(measured(dirs[0]).values())
    return done >= after_done and started(dirs[0]) > done


def live_servers(run: Path) -> list[int]:
    """Processes whose working directory is inside the run (servers run in their job dir)."""
    found = []
    target = str(run.resolve())
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cwd = os.readlink(proc / "cwd")
        except OSError:
            continue
        if cwd.startswith(target):
            found.append(int(proc.name))
    return found


def no_live_servers(run: Path, timeout: float = 15) -> bool:
    deadline = time.monotonic() + timeout
    while live_servers(run):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def state(run: Path) -> RunState:
    return RunState.model_validate_json((run / "state.json").read_text())


def slurm_answers() -> bool:
    if shutil.which("sinfo") is None:
        return False
    try:
        out = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and bool(out.stdout.strip())


def queued_jobs(run: Path) -> list[str]:
    """The run's Slurm jobs (ids from their job directories) still in the queue."""
    ids = [p.read_text().strip() for p in run.glob("*/slurm-job-id")]
    alive = []
    for job_id in ids:
        out = subprocess.run(
            ["squeue", "-h", "-j", job_id, "-o", "%T"], capture_output=True, text=True, timeout=30
        )
        if out.returncode == 0 and out.stdout.strip():
            alive.append(job_id)
    return alive


def queue_drained(run: Path, timeout: float = 60) -> bool:
    deadline = time.monotonic() + timeout
    while queued_jobs(run):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.5)
    return True
